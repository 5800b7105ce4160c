import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { R2Storage } from "../../storage-adapters/r2-storage.ts";
import { WHOLE_BODY_MAX } from "../../storage-adapters/whole-body.ts";
import { fileAt } from "../checked-paths.ts";

/**
 * The real bucket, with another writer slipped in at one exact moment: just
 * before the adapter's own put of `key`. That is the interleaving a
 * concurrent client can produce, made deterministic.
 */
function bucketWithRacer(key: string, racer: () => Promise<unknown>): R2Bucket {
  let raced = false;
  return new Proxy(env.BUCKET, {
    get(target, prop) {
      if (prop === "put") {
        return async (k: string, value: never, options?: R2PutOptions) => {
          if (k === key && !raced) {
            raced = true;
            await racer();
          }
          return target.put(k, value, options);
        };
      }
      const value = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/**
 * The real bucket, counting the adapter's calls on `key`; `onPut(n)` runs as
 * the n-th put of it starts, `afterPut(n)` once it is stored.
 */
function watchedBucket(key: string, hooks: { onPut?: (n: number) => void; afterPut?: (n: number) => void }) {
  const calls = { puts: 0, gets: 0 };
  const bucket = new Proxy(env.BUCKET, {
    get(target, prop) {
      if (prop === "put") {
        return async (k: string, value: never, options?: R2PutOptions) => {
          if (k !== key) return target.put(k, value, options);
          const n = ++calls.puts;
          hooks.onPut?.(n);
          const stored = await target.put(k, value, options);
          hooks.afterPut?.(n);
          return stored;
        };
      }
      if (prop === "get") {
        return (k: string, options?: R2GetOptions) => {
          if (k === key) calls.gets++;
          return target.get(k, options);
        };
      }
      const value = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { bucket, calls };
}

/** A streamed write (over the whole-body bound, so it is sealed by a self-copy after its put). */
async function bigWrite(bucket: R2Bucket, name: string, signal: AbortSignal) {
  const bytes = new Uint8Array(WHOLE_BODY_MAX + 1024).fill(7);
  const result = await new R2Storage(bucket).write(fileAt(["races/seal/"], name), new Response(bytes).body!, {
    length: bytes.length,
    contentType: "application/octet-stream",
    signal,
  });
  const object = await env.BUCKET.get(`races/seal/${name}`);
  return { result, bytes, object: object!, stored: new Uint8Array(await object!.arrayBuffer()) };
}

describe("R2 adapter under races", () => {
  it("a revocation while a streamed write is being sealed cuts the copy: the file stays whole, without its hash", async () => {
    const revoke = new AbortController();
    // The revocation arrives as the seal's copy starts.
    const { bucket, calls } = watchedBucket("races/seal/mid", { onPut: (n) => n === 2 && revoke.abort() });
    const { result, bytes, object, stored } = await bigWrite(bucket, "mid", revoke.signal);
    expect(result.ok).toBe(true);
    expect(calls.puts).toBe(2);
    // The copy was cut, so it stored nothing: the hash was never recorded.
    expect(object.customMetadata?.sha256).toBeUndefined();
    expect(stored).toEqual(bytes);
  });

  it("a revocation after the put and before the seal skips the seal", async () => {
    const revoke = new AbortController();
    const { bucket, calls } = watchedBucket("races/seal/before", { afterPut: (n) => n === 1 && revoke.abort() });
    const { result, bytes, object, stored } = await bigWrite(bucket, "before", revoke.signal);
    expect(result.ok).toBe(true);
    expect(calls).toEqual({ puts: 1, gets: 0 });
    expect(object.customMetadata?.sha256).toBeUndefined();
    expect(stored).toEqual(bytes);
  });

  it("without a revocation the seal records the hash", async () => {
    const { bucket } = watchedBucket("races/seal/kept", {});
    const { result, object } = await bigWrite(bucket, "kept", new AbortController().signal);
    expect(result.ok && result.value.sha256).toBe(object.customMetadata?.sha256);
  });

  it("a move whose destination appears mid-copy refuses and keeps its source", async () => {
    await env.BUCKET.put("races/move/a", "the only copy");
    const storage = new R2Storage(bucketWithRacer("races/move/b", () => env.BUCKET.put("races/move/b", "racer")));
    const result = await storage.move(fileAt(["races/move/"], "a"), fileAt(["races/move/"], "b"), false);
    expect(result).toEqual({ ok: false, error: { code: "conflict", message: "the destination exists" } });
    expect(await (await env.BUCKET.get("races/move/a"))!.text()).toBe("the only copy");
    expect(await (await env.BUCKET.get("races/move/b"))!.text()).toBe("racer");
  });

  it("a conditional write whose file changed after it was judged stores nothing", async () => {
    const first = await env.BUCKET.put("races/write/f", "v1");
    const storage = new R2Storage(
      bucketWithRacer("races/write/f", () => env.BUCKET.put("races/write/f", "someone else")),
    );
    const body = new Response("mine").body!;
    const result = await storage.write(fileAt(["races/write/"], "f"), body, {
      length: 4,
      contentType: "text/plain",
      ifMatch: `"${first!.etag}"`,
    });
    expect(result).toEqual({ ok: false, error: { code: "precondition_failed", message: "precondition failed" } });
    expect(await (await env.BUCKET.get("races/write/f"))!.text()).toBe("someone else");
  });
});
