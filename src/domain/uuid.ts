/** The one UUID check (any version, either case), for ids that come from clients or rows. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Unknown or malformed ids are simply not found: callers cannot tell the difference. */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
