// The two Student t functions the record statistics use; jstat ships no types.
declare module 'jstat' {
  const jstat: {
    jStat: {
      studentt: {
        cdf(x: number, degreesOfFreedom: number): number;
        inv(p: number, degreesOfFreedom: number): number;
      };
    };
  };
  export default jstat;
}
