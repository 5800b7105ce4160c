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
  /**
   * The framed body: a stream, or for a small call over the socket the
   * bytes themselves, read whole (see WHOLE_CALL_BYTES in socket-server.ts).
   */
  readonly body: ReadableStream<Uint8Array> | Uint8Array | null;
}

/**
 * A call's answer as the host makes it (always status 200): JSON text, or a
 * read's bytes with their headers. The socket writes it as it is; a `fetch`
 * caller gets it as a Response ({@link toResponse}). Building an undici
 * Response per call was about a fifth of a small read's CPU in the host
 * (profiled: `_Response` 119 of serveCall's 284 samples over a disk bench).
 */
export interface HostAnswer {
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | ReadableStream<Uint8Array>;
}

const JSON_HEADERS = { "content-type": "application/json" } as const;

/** A Result (or any JSON) as the host answers it. */
export function jsonAnswer(value: unknown): HostAnswer {
  return { headers: JSON_HEADERS, body: JSON.stringify(value) };
}

export function toResponse(answer: HostAnswer): Response {
  return new Response(answer.body, { status: 200, headers: answer.headers });
}

/** Lets go of a body the host will not read. */
export async function dropBody(body: HostRequest["body"]): Promise<void> {
  if (body && !(body instanceof Uint8Array)) await body.cancel().catch(() => undefined);
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
