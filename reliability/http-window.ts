import { describe, type Observed } from "./http-call.ts";

/**
 * A request whose answer may never end (a change feed): what came within
 * `windowMs`, at most `maxBytes` of it, then the request is cut. A refusal
 * (not 200) is small and read whole, within `timeoutMs`.
 */
export async function callWindow(
  url: string,
  init: RequestInit,
  windowMs: number,
  maxBytes: number,
  timeoutMs = 30_000,
): Promise<Observed> {
  const cut = new AbortController();
  const deadline = setTimeout(() => cut.abort(), timeoutMs);
  try {
    const response = await fetch(url, { ...init, signal: cut.signal, redirect: "manual" });
    const headers = [...response.headers];
    const chunks: Uint8Array[] = [];
    let size = 0;
    const reader = response.body?.getReader();
    if (reader) {
      const windowEnds = response.status === 200 ? setTimeout(() => cut.abort(), windowMs) : undefined;
      try {
        while (size < maxBytes) {
          const { done, value } = await reader.read();
          if (done) break;
          chunks.push(value);
          size += value.byteLength;
        }
      } catch (error) {
        // The window closing is the expected end of a feed; anything else is kept as the error.
        if (!cut.signal.aborted || response.status !== 200)
          return { status: response.status, headers, body: join(chunks), error: `body: ${describe(error)}` };
      } finally {
        clearTimeout(windowEnds);
        await reader.cancel().catch(() => undefined);
      }
    }
    return { status: response.status, headers, body: join(chunks) };
  } catch (error) {
    return { status: 0, headers: [], body: new Uint8Array(), error: describe(error) };
  } finally {
    clearTimeout(deadline);
  }
}

function join(chunks: Uint8Array[]): Uint8Array {
  return new Uint8Array(Buffer.concat(chunks));
}
