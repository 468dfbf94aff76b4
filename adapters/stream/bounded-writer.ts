/**
 * A stream client that does not read must not make server memory grow: once more than
 * `maxBuffered` bytes wait unsent in user space (the kernel's socket buffers are already
 * full by then), the next write is refused and `onOverflow` runs instead; the caller closes
 * the connection. So a connection holds at most `maxBuffered` bytes plus one chunk.
 */
export interface BufferedSink {
  readonly writableLength: number;
  write(chunk: string): unknown;
}

export function boundedWriter(sink: BufferedSink, maxBuffered: number, onOverflow: (buffered: number) => void): (chunk: string) => boolean {
  return (chunk) => {
    if (sink.writableLength > maxBuffered) {
      onOverflow(sink.writableLength);
      return false;
    }
    sink.write(chunk);
    return true;
  };
}
