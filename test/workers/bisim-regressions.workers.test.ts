/**
 * Differences between the R2 and disk backends (or between them and the
 * contract) that the bisimulation test (test/node/bisimulation.node.test.ts)
 * found, each pinned here on both backends so it cannot come back.
 */
import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { VersionPage } from "../../shared/wire-types.ts";
import { call, cap, child, mintRoot } from "./vault.ts";

let counter = 0;

type Page = { entries: { name: string; type: string }[]; cursor: string | null };

/** Every entry of `path`, in pages of `limit` (the first page) and then of `nextLimit`. */
async function names(fs: ReturnType<typeof cap>, path = "", limit = 1000, nextLimit = limit): Promise<string[]> {
  const out: string[] = [];
  let cursor: string | null = null;
  do {
    const res = await fs.list(path, `&limit=${cursor ? nextLimit : limit}${cursor ? `&cursor=${cursor}` : ""}`);
    expect(res.status).toBe(200);
    const page = (await res.json()) as Page;
    out.push(...page.entries.map((e) => `${e.type}:${e.name}`));
    cursor = page.cursor;
  } while (cursor);
  return out;
}

describe.each(["r2", "disk"] as const)("%s backend", (backend) => {
  const fresh = async () => cap((await mintRoot(`bisim-regressions/${++counter}/`, { backend })).token);

  it("lists names that are paths only below a cap's root (`~x`, `c:`), and pages on past them", async () => {
    const fs = await fresh();
    for (const p of ["a/~x", "a/c:", "a/~y", "b/~z"]) expect((await fs.write(p, p)).status).toBe(201);
    expect(await names(fs, "a", 1)).toEqual(["file:c:", "file:~x", "file:~y"]);
    // `b` holds only `~z`, which the root cap reaches as `b/~z`: it exists.
    expect(await names(fs)).toEqual(["dir:a", "dir:b"]);
    expect(await (await fs.stat("b")).json()).toEqual({ type: "dir" });
    // A cap rooted at `a` cannot name `~x` (an absolute path for it), so its listing leaves them out.
    const sub = await child(fs, { path: "a" });
    expect(await names(sub)).toEqual([]);
  });

  it("judges a weak or listed If-Match by the etag, as every backend does", async () => {
    const fs = await fresh();
    const etag = ((await (await fs.write("f", "one")).json()) as { etag: string }).etag;
    const weak = await fs.write("f", "two", { "if-match": `W/"${etag}"` });
    expect(weak.status).toBe(200);
    const etag2 = ((await weak.json()) as { etag: string }).etag;
    expect((await fs.write("f", "three", { "if-match": `"0123", "${etag2}"` })).status).toBe(200);
    expect((await fs.write("f", "four", { "if-match": `"${etag}"` })).status).toBe(412);
    expect(await (await fs.read("f")).text()).toBe("three");
  });

  it("refuses a write below a child cap's root once that root has become a file", async () => {
    const fs = await fresh();
    const sub = await child(fs, { path: "x" });
    expect((await fs.write("x", "a file now")).status).toBe(201);
    const refused = await sub.write("f", "beneath a file");
    expect(refused.status).toBe(409);
    expect(await refused.json()).toEqual({ error: { code: "conflict", message: "a parent of that path is a file" } });
    expect(await names(fs)).toEqual(["file:x"]);
    expect((await sub.subdir({ path: "" })).status).toBe(409);
  });

  it("keeps the folder a child cap left empty: no file or move takes its name until it is removed", async () => {
    const fs = await fresh();
    await fs.write("d/f", "f");
    const sub = await child(fs, { path: "d" });
    expect((await sub.remove("f")).status).toBe(204);
    expect(await names(fs)).toEqual(["dir:d"]);
    expect(await names(sub)).toEqual([]);
    expect((await fs.write("d", "now a file")).status).toBe(409);
    await fs.write("n", "moved");
    expect((await fs.move({ from: "n", to: "d", overwrite: true })).status).toBe(409);
    // The child cannot remove its own root; its parent removes the empty folder.
    expect((await sub.removeFolder("")).status).toBe(400);
    expect((await fs.removeFolder("d")).status).toBe(204);
    expect((await fs.write("d", "now a file")).status).toBe(201);
    expect(await (await fs.read("d")).text()).toBe("now a file");
    expect((await fs.remove("n")).status).toBe(204);

    // A refused write through a child whose root did not exist yet.
    const fresh2 = await child(fs, { path: "e" });
    expect((await fresh2.write("x", "x", { "if-match": '"0123"' })).status).toBe(412);
    await fs.write("m", "moved");
    expect((await fs.move({ from: "m", to: "e" })).status).toBe(200);
    expect(await (await fs.read("e")).text()).toBe("moved");
    expect(await names(fs)).toEqual(["file:d", "file:e"]);
  });

  it("returns a content type as it was stored, even with a tab or over 256 characters", async () => {
    const fs = await fresh();
    for (const type of ["a\tb", `text/plain; x=${"y".repeat(300)}`]) {
      expect((await fs.write("f", "x", { "content-type": type })).status).toBeLessThan(300);
      expect((await fs.read("f")).headers.get("content-type")).toBe(type);
      expect(await (await fs.stat("f")).json()).toMatchObject({ contentType: type });
    }
  });

  it("ends a file's versions with `cursor: null` on a page that is exactly full", async () => {
    const fs = await fresh();
    for (const body of ["one", "two"]) expect((await fs.write("f", body)).status).toBeLessThan(300);
    const page = async (query: string) =>
      (await (await call("GET", `/object/${fs.token}/versions?path=f${query}`)).json()) as VersionPage;
    const first = await page("&limit=1");
    expect(first.versions.map((v) => v.operation)).toEqual(["modified"]);
    expect(first.cursor).toBe(first.versions[0]!.id);
    const last = await page(`&limit=1&cursor=${first.cursor}`);
    expect(last.versions.map((v) => v.operation)).toEqual(["created"]);
    expect(last.cursor).toBeNull();
    expect(await page("&limit=2")).toMatchObject({ cursor: null });
  });

  it.runIf(backend === "r2")(
    "lists a folder whose key sorts after a full page of R2 keys in its place by name",
    async () => {
      const fs = await fresh();
      const prefix = `bisim-regressions/${counter}/many/`;
      // "a!…" sorts before "a/" as a key ('!' < '/') but after "a" as a name.
      const files = Array.from({ length: 1001 }, (_, i) => `a!${String(i).padStart(4, "0")}`);
      for (let i = 0; i < files.length; i += 250)
        await Promise.all(files.slice(i, i + 250).map((n) => env.BUCKET.put(prefix + n, "x")));
      await env.BUCKET.put(`${prefix}a/inner`, "x");
      // A first page of 10 ends long before R2's first page of keys does; the later pages (of 250, each an R2 list
      // of up to 1,000 keys, so not 100 of them) meet `a/` again and must not list it twice.
      const listed = await names(fs, "many", 10, 250);
      expect(listed[0]).toBe("dir:a");
      expect(listed.length).toBe(1002);
      expect(new Set(listed).size).toBe(1002);
    },
    60_000,
  );
});
