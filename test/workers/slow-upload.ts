import { env, runInDurableObject } from "cloudflare:test";
import { vi } from "vitest";
import { capObjectStub } from "../../durable-objects/object-stubs.ts";
import { digestToken } from "../../shared/token.ts";
import { call } from "./vault.ts";

export const UPLOAD_BYTES = 64 * 1024;

/** The Durable Object behind a token. */
export async function capObject(token: string) {
  const { key } = await digestToken(token);
  return capObjectStub(env, key);
}

/**
 * A PUT whose body the test feeds by hand: the first half at once, the rest
 * only when `finish()` is called. Until then the upload is in flight.
 */
export function slowPut(token: string, path: string) {
  const { readable, writable } = new FixedLengthStream(UPLOAD_BYTES);
  const writer = writable.getWriter();
  const bytes = new Uint8Array(UPLOAD_BYTES).fill(0x78);
  void writer.write(bytes.slice(0, UPLOAD_BYTES / 2)).catch(() => undefined);
  const response = call("PUT", `/object/${token}/file?path=${encodeURIComponent(path)}`, { body: readable });
  return {
    response,
    /** Sends the rest of the body; a body already cut just refuses it. */
    async finish(): Promise<void> {
      await writer.write(bytes.slice(UPLOAD_BYTES / 2)).catch(() => undefined);
      await writer.close().catch(() => undefined);
    },
  };
}

/**
 * A PUT whose client trickles: half the body at once, then a few bytes at a
 * time, never idle long enough for storage's idle timeout, until the whole
 * body went (then the upload completes: `ended` says "completed") or the
 * body was cut under it ("cut"). A revocation that waited for it would
 * answer only after `ended`.
 */
export function tricklePut(token: string, path: string, options: { chunkBytes?: number; everyMs?: number } = {}) {
  const chunkBytes = options.chunkBytes ?? 64;
  const everyMs = options.everyMs ?? 25;
  const { readable, writable } = new FixedLengthStream(UPLOAD_BYTES);
  const writer = writable.getWriter();
  const bytes = new Uint8Array(UPLOAD_BYTES).fill(0x78);
  const response = call("PUT", `/object/${token}/file?path=${encodeURIComponent(path)}`, { body: readable });
  const ended = (async (): Promise<"completed" | "cut"> => {
    try {
      await writer.write(bytes.slice(0, UPLOAD_BYTES / 2));
      for (let at = UPLOAD_BYTES / 2; at < UPLOAD_BYTES; at += chunkBytes) {
        await new Promise((resolve) => setTimeout(resolve, everyMs));
        await writer.write(bytes.slice(at, at + chunkBytes));
      }
      await writer.close();
      return "completed";
    } catch {
      return "cut";
    }
  })();
  return { response, ended };
}

/**
 * Waits until the cap's object runs `count` uploads: authorised, and in the
 * set that revocation and expiry must stop. Synchronisation, not timing.
 */
export async function uploadsRunning(token: string, count = 1): Promise<void> {
  const stub = await capObject(token);
  await vi.waitFor(
    async () => {
      // The set lives on the object, or on its revocation part once split out (cap-revocation.ts).
      const running = await runInDurableObject(stub, (instance) => {
        const object = instance as unknown as { running?: Set<unknown>; revocation?: { running: Set<unknown> } };
        return (object.revocation?.running ?? object.running)?.size ?? 0;
      });
      if (running < count) throw new Error(`${running} of ${count} uploads running`);
    },
    { timeout: 30_000, interval: 20 },
  );
}

/**
 * Rewrites a live cap's expiry in place, with no alarm (so only the clock
 * can act) or with one due then (`alarm: true`, for runDurableObjectAlarm).
 */
export async function setExpiry(token: string, expiresAt: number, options: { alarm?: boolean } = {}): Promise<void> {
  await runInDurableObject(await capObject(token), async (_instance, state) => {
    const record = await state.storage.get<{ expiresAt: number | null }>("cap");
    if (!record) throw new Error("no record");
    await state.storage.put("cap", { ...record, expiresAt });
    // Due later than now, so it runs only when the test runs it.
    if (options.alarm) await state.storage.setAlarm(Date.now() + 60_000);
    else await state.storage.deleteAlarm();
  });
}
