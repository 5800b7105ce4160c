import { readWithin } from "./read-within.ts";

/** How much of a refused request body is read and dropped, rather than cut, so its connection stays usable. */
export const SETTLE_BYTES = 1024 * 1024;
/** A refused body that pauses this long, or takes this long in all, is cut: a dripping sender holds nothing. */
const SETTLE_IDLE_MS = 2_000;
const SETTLE_TOTAL_MS = 5_000;

/**
 * Disposes of a request body nothing will store.
 *
 * Why not just cancel it: a body left unread makes the runtime close the
 * connection after answering, without `Connection: close`, so a pooled
 * client's next request on it dies unanswered (`npm run reliability` saw
 * 1.7 % of fuzz requests dropped that way). A small body is read to its end,
 * which keeps the connection; one past {@link SETTLE_BYTES} is cancelled, and
 * its connection goes: reading it would cost more than a new connection.
 * A declared length past the bound is cancelled at once, unread, and so is a
 * body that stalls or drips (a refusal never waits long on its sender).
 *
 * @example
 * if (!allowed) { await settleBody(request.body); return refusal; }
 */
export async function settleBody(
  body: ReadableStream<Uint8Array> | null | undefined,
  declaredLength?: number | null,
): Promise<void> {
  if (!body) return;
  if (declaredLength != null && declaredLength > SETTLE_BYTES) {
    await body.cancel().catch(() => undefined);
    return;
  }
  let reader: ReadableStreamDefaultReader<Uint8Array>;
  try {
    reader = body.getReader();
  } catch {
    return; // already taken by someone else, who owns it
  }
  let total = 0;
  const deadline = Date.now() + SETTLE_TOTAL_MS;
  try {
    for (;;) {
      const next = await readWithin(reader, SETTLE_IDLE_MS, deadline);
      if (next !== "timeout" && next.done) return;
      if (next !== "timeout") total += next.value.byteLength;
      if (next === "timeout" || total > SETTLE_BYTES) {
        await reader.cancel();
        return;
      }
    }
  } catch {
    // The sender went away: nothing left to settle.
  }
}
