/**
 * What the disk host reads of a call: its method, one header (the per-start
 * secret) and the framed body. A fetch `Request` is one (tests and Miniflare
 * bindings pass those); the socket passes a view of Node's request instead,
 * since building an undici `Request` per call (its URL, signal and headers)
 * cost more than most calls' own work.
 */
export interface HostRequest {
  readonly method: string;
  readonly headers: { get(name: string): string | null };
  readonly body: ReadableStream<Uint8Array> | null;
}

/** `name`'s value among Node's raw header pairs as `Headers.get` gives it: every occurrence, joined by ", ". */
export function rawHeader(raw: readonly string[], name: string): string | null {
  const wanted = name.toLowerCase();
  let value: string | null = null;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() !== wanted) continue;
    value = value === null ? raw[i + 1]! : `${value}, ${raw[i + 1]!}`;
  }
  return value;
}
