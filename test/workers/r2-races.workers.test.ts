import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { refuse } from "../../shared/refusals.ts";
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

/*
 * What a race leaves in R2 stays refused. Two racing writers of `a` and `a/b` can leave both keys
 * (R2 has no multi-key transaction; r2-storage.ts says so), and writes after the race must not
 * build on that state: every later write of `a/b` heads `a` and is refused (parentIsFile), every
 * later write of `a` lists `a/` and is refused (isDirectory), as on disk, where the state cannot
 * exist. A shortcut that skipped those checks for overwrites of keys the isolate had just written
 * (15969b1, reverted) let both kinds land again, through a child cap whose root had become a file
 * too; these tests failed on it.
 *
 * The race is made deterministic with bucketWithRacer above: the other writer is slipped in
 * just before the adapter's own put of the key.
 */

const text = (s: string) => new Response(s).body!;
const opts = (s: string) => ({ length: s.length, contentType: "text/plain" });

describe("R2: what a race leaves stays refused", () => {
  it("after a race leaves a child cap's root `x` a file with `x/f` under it, later writes of `x/f` are refused as on the full checks", async () => {
    const top = "race-leftovers/child/";
    const parentRoot = [top];
    const childRoot = [top, "x/"];
    const parent = new R2Storage(env.BUCKET);
    // The child writes `f` (key x/f) while the parent writes the file `x`: the parent's write is
    // judged and stored between the child's checks and its put.
    const racing = new R2Storage(
      bucketWithRacer(`${top}x/f`, async () => {
        const won = await parent.write(fileAt(parentRoot, "x"), text("file"), opts("file"));
        expect(won.ok).toBe(true);
      }),
    );
    expect((await racing.write(fileAt(childRoot, "f"), text("one"), opts("one"))).ok).toBe(true);
    // The race's outcome, which the adapter documents: both keys hold files.
    expect(await env.BUCKET.head(`${top}x`)).not.toBeNull();
    expect(await env.BUCKET.head(`${top}x/f`)).not.toBeNull();

    const child = new R2Storage(env.BUCKET);
    // Control: a key under `x` this isolate has not written is refused, as the full checks refuse it.
    expect(await child.write(fileAt(childRoot, "g"), text("two"), opts("two"))).toEqual(refuse("parentIsFile"));
    // No race any more: the child cap's root is a file, so a write below it is refused, as on disk,
    // though the key holds a file this isolate just wrote.
    expect(await child.write(fileAt(childRoot, "f"), text("two"), opts("two"))).toEqual(refuse("parentIsFile"));
  });

  it("after the same race, later writes of the file `x` over the folder `x/` are refused as on the full checks", async () => {
    const top = "race-leftovers/parent/";
    const parentRoot = [top];
    const parent = new R2Storage(env.BUCKET);
    const racing = new R2Storage(
      bucketWithRacer(`${top}x/f`, async () => {
        expect((await parent.write(fileAt(parentRoot, "x"), text("file"), opts("file"))).ok).toBe(true);
      }),
    );
    expect((await racing.write(fileAt(parentRoot, "x/f"), text("one"), opts("one"))).ok).toBe(true);
    // `x/` holds a key, so `x` is a folder: a write of the file `x` must be refused.
    expect(await parent.write(fileAt(parentRoot, "x"), text("again"), opts("again"))).toEqual(refuse("isDirectory"));
  });

  it("a file put around the vault where a written key's folder is: its rewrite is refused as a new key's is", async () => {
    const top = "race-leftovers/around/";
    const root = [top];
    const storage = new R2Storage(env.BUCKET);
    expect((await storage.write(fileAt(root, "d/f"), text("one"), opts("one"))).ok).toBe(true);
    expect((await storage.write(fileAt(root, "d/g"), text("one"), opts("one"))).ok).toBe(true);
    // Around the vault (r2-subrequests' test deletes `d/f` first; here it stays).
    await env.BUCKET.put(`${top}d`, "around the vault");
    await env.BUCKET.delete(`${top}d/g`);
    // A key gone around the vault: refused.
    expect(await storage.write(fileAt(root, "d/g"), text("two"), opts("two"))).toEqual(refuse("parentIsFile"));
    // A key this adapter wrote and that is still there: refused alike.
    expect(await storage.write(fileAt(root, "d/f"), text("two"), opts("two"))).toEqual(refuse("parentIsFile"));
  });
});
