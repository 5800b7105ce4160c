import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { R2Storage } from "../../storage-adapters/r2-storage.ts";
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

describe("R2 adapter under races", () => {
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
