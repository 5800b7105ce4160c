import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { refuse } from "../../shared/refusals.ts";
import { ANCESTOR_CALLS_MAX, R2Storage } from "../../storage-adapters/r2-storage.ts";
import { WHOLE_BODY_MAX } from "../../storage-adapters/whole-body.ts";
import { dirAt, fileAt, rootAt } from "../checked-paths.ts";

/**
 * Every R2 call is a subrequest on Cloudflare, and a request may make only
 * 50 of them on the Free plan: an operation whose calls grow with its path
 * would fail there on deep paths. These run the adapter on the real bucket,
 * counting its calls.
 */
const FREE_PLAN_SUBREQUESTS = 50;

function countingBucket(): { bucket: R2Bucket; calls: () => number; puts: () => number } {
  let calls = 0;
  let puts = 0;
  const bucket = new Proxy(env.BUCKET, {
    get(target, prop) {
      const value = Reflect.get(target, prop);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        calls++;
        if (prop === "put") puts++;
        return value.apply(target, args);
      };
    },
  });
  return { bucket, calls: () => calls, puts: () => puts };
}

const body = (text: string) => new Response(text).body!;
const deep = (depth: number) => `${"d/".repeat(depth)}f`;

describe("R2 calls per operation stay bounded however deep the path", () => {
  it("a write 400 folders deep makes at most the documented number of calls", async () => {
    const { bucket, calls } = countingBucket();
    const storage = new R2Storage(bucket);
    const written = await storage.write(fileAt(["subreq/w/"], deep(400)), body("deep"), {
      length: 4,
      contentType: "text/plain",
    });
    expect(written.ok).toBe(true);
    // list, head, put (a body this small is hashed before its put).
    expect(calls()).toBeLessThanOrEqual(ANCESTOR_CALLS_MAX + 3);
    expect(calls()).toBeLessThan(FREE_PLAN_SUBREQUESTS);
    expect(await (await env.BUCKET.get(`subreq/w/${deep(400)}`))!.text()).toBe("deep");
  });

  it.each([1, 2, 9, 150, 399])("a file at ancestor level %i of a deep write is still a conflict", async (level) => {
    const base = `subreq/c${level}/`;
    await env.BUCKET.put(`${base}${"d/".repeat(level - 1)}d`, "a file where a folder is needed");
    const { bucket, calls } = countingBucket();
    const storage = new R2Storage(bucket);
    const written = await storage.write(fileAt([base], deep(400)), body("deep"), {
      length: 4,
      contentType: "text/plain",
    });
    expect(written).toMatchObject({ ok: false, error: { code: "conflict" } });
    expect(calls()).toBeLessThan(FREE_PLAN_SUBREQUESTS);
    // Beside folders that hold keys, too: the deepest folder holding keys is found, not the first.
    await env.BUCKET.put(`${base}${"d/".repeat(level - 1)}e/other`, "x");
    const again = await storage.write(fileAt([base], deep(400)), body("deep"), {
      length: 4,
      contentType: "text/plain",
    });
    expect(again).toMatchObject({ ok: false, error: { code: "conflict" } });
  });

  it("a small file is one put with its hash; past 256 KiB, a streamed put and a copy that records it", async () => {
    const sha256 = async (bytes: Uint8Array) =>
      [...new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))]
        .map((b) => b.toString(16).padStart(2, "0"))
        .join("");
    for (const [size, puts] of [
      [WHOLE_BODY_MAX, 1],
      [WHOLE_BODY_MAX + 1, 2],
    ] as const) {
      const bytes = new Uint8Array(size).fill(7);
      const counting = countingBucket();
      const written = await new R2Storage(counting.bucket).write(
        fileAt(["subreq/h/"], `f${size}`),
        new Response(bytes).body!,
        {
          length: size,
          contentType: "application/octet-stream",
        },
      );
      expect(written.ok && written.value.sha256).toBe(await sha256(bytes));
      expect(counting.puts(), `${size} bytes`).toBe(puts);
      expect((await env.BUCKET.head(`subreq/h/f${size}`))!.customMetadata!.sha256).toBe(await sha256(bytes));
    }
  });

  // A file this adapter wrote, then changed around it: what R2 holds now decides the next write.
  it.each([
    ["a file now sits where its folder is", "subreq/s1/", "d/f", "d", "parentIsFile"],
    ["a folder now holds keys at it", "subreq/s2/", "d", "d/f", "isDirectory"],
  ] as const)("a stale guess finds no file and still refuses: %s", async (_, root, file, other, refusal) => {
    const storage = new R2Storage(env.BUCKET);
    expect((await storage.write(fileAt([root], file), body("x"), { length: 1, contentType: "text/plain" })).ok).toBe(
      true,
    );
    // Around this isolate's adapter: the file goes and something the write must not pass takes its place.
    await env.BUCKET.delete(`${root}${file}`);
    await env.BUCKET.put(`${root}${other}`, "around the vault");
    const { bucket, calls } = countingBucket();
    const again = await new R2Storage(bucket).write(fileAt([root], file), body("y"), {
      length: 1,
      contentType: "text/plain",
    });
    expect(again).toEqual(refuse(refusal));
    expect(calls()).toBeLessThanOrEqual(ANCESTOR_CALLS_MAX + 2);
    expect(await env.BUCKET.head(`${root}${file}`)).toBeNull();
  });

  it("a move and a new root 400 folders deep stay bounded too", async () => {
    await env.BUCKET.put("subreq/m/src", "moving");
    const { bucket, calls } = countingBucket();
    const storage = new R2Storage(bucket);
    expect((await storage.move(fileAt(["subreq/m/"], "src"), fileAt(["subreq/m/"], deep(400)), false)).ok).toBe(true);
    expect(calls()).toBeLessThanOrEqual(ANCESTOR_CALLS_MAX + 6);
    let before = calls();
    expect((await storage.prepareRoot(rootAt(["subreq/p/", `${"d/".repeat(400)}`]))).ok).toBe(true);
    expect(calls() - before).toBeLessThanOrEqual(ANCESTOR_CALLS_MAX);
    // A folder made 400 deep, then removed: its marker, then the parent's marker and a delete.
    before = calls();
    expect((await storage.makeDir(rootAt(["subreq/p/", `${"d/".repeat(400)}`]))).ok).toBe(true);
    expect(calls() - before).toBeLessThanOrEqual(ANCESTOR_CALLS_MAX + 1);
    before = calls();
    expect((await storage.removeDir(rootAt(["subreq/p/", `${"d/".repeat(400)}`]))).ok).toBe(true);
    expect(calls() - before).toBe(4);
  });

  it("a listing cut after a name full of bytes below `/` stays bounded and still lists every name once", async () => {
    // 1,001 files, so R2's first page of 1,000 is cut at a name with 100 dashes (each a place a folder could hide).
    const dashes = "-".repeat(100);
    const names = Array.from({ length: 1001 }, (_, i) => `b${dashes}${String(i).padStart(4, "0")}`);
    for (let i = 0; i < names.length; i += 50)
      await Promise.all(names.slice(i, i + 50).map((name) => env.BUCKET.put(`subreq/l/${name}`, "x")));
    // Folders whose names are prefixes of that last name, which R2 lists only after it.
    const folders = ["b", `b${"-".repeat(3)}`, `b${"-".repeat(40)}`];
    for (const folder of folders) await env.BUCKET.put(`subreq/l/${folder}/inner`, "x");
    const { bucket, calls } = countingBucket();
    const storage = new R2Storage(bucket);
    const seen: string[] = [];
    let after: string | null = null;
    for (let pages = 0; pages < 20; pages++) {
      const before = calls();
      const page = await storage.list(dirAt(["subreq/l/"], ""), { after, limit: 900 });
      if (!page.ok) throw new Error(page.error.code);
      expect(calls() - before).toBeLessThan(FREE_PLAN_SUBREQUESTS);
      seen.push(...page.value.entries.map((entry) => entry.name));
      if (page.value.next === null) break;
      after = page.value.next;
    }
    expect(seen).toEqual([...folders, ...names].sort());
  }, 120_000);
});
