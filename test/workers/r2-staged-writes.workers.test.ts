import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { R2Storage } from "../../storage-adapters/r2-storage.ts";
import { newBlobName, R2_VERSIONS_PREFIX } from "../../storage-adapters/version-blobs.ts";
import { WHOLE_BODY_MAX } from "../../storage-adapters/whole-body.ts";
import { fileAt } from "../checked-paths.ts";

/**
 * A streamed write that keeps a version is staged in its version blob, then
 * copied to its key with its hash. Until that copy lands the file is what it
 * was; whatever stops it (a failure, another writer, a revocation) drops the
 * blob, so a write that did not happen keeps no bytes and, never answered
 * as done, no version. The real bucket, with one moment of the key's put
 * hooked.
 */
function hookedBucket(key: string, onPut: () => Promise<void> | void) {
  const calls = { puts: 0, gets: 0 };
  const bucket = new Proxy(env.BUCKET, {
    get(target, prop) {
      if (prop === "put")
        return async (k: string, value: never, options?: R2PutOptions) => {
          calls.puts++;
          if (k === key) await onPut();
          return target.put(k, value, options);
        };
      if (prop === "get")
        return (k: string, options?: R2GetOptions) => {
          calls.gets++;
          return target.get(k, options);
        };
      const value = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { bucket, calls };
}

const BIG = new Uint8Array(WHOLE_BODY_MAX + 1024).map((_, i) => i % 251);

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

async function write(bucket: R2Bucket, name: string, extra: { ifMatch?: string; signal?: AbortSignal } = {}) {
  const keepAs = newBlobName();
  const result = await new R2Storage(bucket).write(fileAt(["staged/"], name), new Response(BIG).body!, {
    length: BIG.length,
    contentType: "application/x-big",
    keepAs,
    ...extra,
  });
  return { result, blob: await env.BUCKET.get(R2_VERSIONS_PREFIX + keepAs) };
}

describe("a streamed write that keeps its version", () => {
  it("writes its bytes twice, not three times: staged in the blob, copied to its key with its hash", async () => {
    const { bucket, calls } = hookedBucket("staged/ok", () => undefined);
    const { result, blob } = await write(bucket, "ok");
    expect(result).toMatchObject({ ok: true, value: { created: true, kept: true, sha256: await sha256Hex(BIG) } });
    expect(calls).toEqual({ puts: 2, gets: 1 });
    const file = (await env.BUCKET.get("staged/ok"))!;
    expect(new Uint8Array(await file.arrayBuffer())).toEqual(BIG);
    expect(file.customMetadata?.sha256).toBe(await sha256Hex(BIG));
    expect(file.httpMetadata?.contentType).toBe("application/x-big");
    expect(new Uint8Array(await blob!.arrayBuffer())).toEqual(BIG);
  });

  it("a key put that fails leaves the file as it was and drops the staged blob", async () => {
    await env.BUCKET.put("staged/fails", "before");
    const { bucket } = hookedBucket("staged/fails", () => {
      throw new Error("storage down");
    });
    const { result, blob } = await write(bucket, "fails");
    expect(result).toMatchObject({ ok: false, error: { code: "unavailable" } });
    expect(blob).toBeNull();
    expect(await (await env.BUCKET.get("staged/fails"))!.text()).toBe("before");
  });

  it("another writer landing before the copy wins a conditional write; the staged blob goes", async () => {
    const first = (await env.BUCKET.put("staged/race", "v1"))!;
    const { bucket } = hookedBucket("staged/race", async () => {
      await env.BUCKET.put("staged/race", "someone else");
    });
    const { result, blob } = await write(bucket, "race", { ifMatch: `"${first.etag}"` });
    expect(result).toMatchObject({ ok: false, error: { code: "precondition_failed" } });
    expect(blob).toBeNull();
    expect(await (await env.BUCKET.get("staged/race"))!.text()).toBe("someone else");
  });

  it("a revocation once the body is staged stores nothing at the key and drops the blob", async () => {
    await env.BUCKET.put("staged/revoked", "before");
    const revoke = new AbortController();
    const { bucket } = hookedBucket("staged/revoked", () => undefined);
    // The revocation lands as the staged put finishes, before the copy to the key starts.
    const staging = new Proxy(bucket, {
      get(target, prop) {
        if (prop === "get")
          return (k: string, options?: R2GetOptions) => {
            revoke.abort();
            return target.get(k, options);
          };
        const value = Reflect.get(target, prop);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const { result, blob } = await write(staging, "revoked", { signal: revoke.signal });
    expect(result.ok).toBe(false);
    expect(blob).toBeNull();
    expect(await (await env.BUCKET.get("staged/revoked"))!.text()).toBe("before");
  });
});
