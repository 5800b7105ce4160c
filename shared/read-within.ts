/**
 * The next chunk, or `"timeout"` when none came within `idleMs` or before
 * `deadline` (ms since the epoch). The reader is left as it is: the caller
 * cancels it. Every body the vault reads from a client goes through a bound
 * like this one, so a sender that stalls or drips cannot hold what the
 * read holds.
 */
export async function readWithin<T>(
  reader: ReadableStreamDefaultReader<T>,
  idleMs: number,
  deadline: number,
): Promise<ReadableStreamReadResult<T> | "timeout"> {
  const wait = Math.min(idleMs, deadline - Date.now());
  if (wait <= 0) return "timeout";
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), wait)));
  try {
    return await Promise.race([reader.read(), expired]);
  } finally {
    clearTimeout(timer);
  }
}
