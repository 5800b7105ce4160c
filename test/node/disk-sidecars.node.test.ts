/**
 * A file's sidecar (its content type and hashes, written in place under its identity, its fsyncs
 * beside the content's). What must hold: no reader ever sees hashes or a content type that are
 * not its bytes', whatever writers race it; no sidecar is left behind for a file that is gone;
 * and a file's sidecar survives a restart's sweep.
 */
import { mkdir, readdir, rename } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Root } from "../../storage-adapters/storage-adapter.ts";
import { entryAt, fileAt } from "../checked-paths.ts";
import { expectOk, fixtureEach, md5, put, sha256 } from "./disk-fixture.ts";

const ROOT: Root = ["r/"];
const fx = fixtureEach(ROOT);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("disk sidecars", () => {
  it("racing writers and readers of one path: every read's meta describes the bytes it returned", async () => {
    expectOk(await put(fx.storage, ROOT, "race.txt", "seed", { contentType: "text/x-seed" }));
    const writers = Array.from({ length: 24 }, (_, i) => `content of writer ${i} `.repeat(i + 1));
    const mismatches: string[] = [];
    let stop = false;
    const reader = (async () => {
      while (!stop && mismatches.length < 20) {
        await new Promise((resolve) => setImmediate(resolve));
        const read = await fx.storage.read(fileAt(ROOT, "race.txt"), {});
        if (!read.ok || read.value.status !== "body") continue;
        const bytes = new Uint8Array(await new Response(read.value.body).arrayBuffer());
        const { meta } = read.value;
        const i = writers.findIndex((w) => new TextEncoder().encode(w).length === bytes.length);
        if (meta.size !== bytes.length) mismatches.push(`size ${meta.size} for ${bytes.length} bytes`);
        if (meta.etag !== md5(bytes)) mismatches.push("etag of other bytes");
        if (meta.sha256 !== null && meta.sha256 !== sha256(bytes)) mismatches.push("sha256 of other bytes");
        if (i >= 0 && meta.contentType !== `text/x-w${i}`) mismatches.push(`type ${meta.contentType} for writer ${i}`);
      }
    })();
    await Promise.all(
      writers.map((text, i) => put(fx.storage, ROOT, "race.txt", text, { contentType: `text/x-w${i}` })),
    );
    stop = true;
    await reader;
    expect(mismatches).toEqual([]);
    // One live file, so at most one sidecar: none left for the replaced inodes.
    expect(await readdir(join(fx.base, ".capvault-meta"))).toHaveLength(1);
    const stat = expectOk(await fx.storage.stat(entryAt(ROOT, "race.txt")));
    expect(stat.type).toBe("file");
  });

  it("a write refused at commit (precondition lost to a racer) leaves no sidecar behind", async () => {
    expectOk(await put(fx.storage, ROOT, "p.txt", "first"));
    // Both judge If-None-Match: * before either commits; one of them must lose at commit.
    const [a, b] = await Promise.all([
      put(fx.storage, ROOT, "q.txt", "aaaa", { ifNoneMatch: "*" }),
      put(fx.storage, ROOT, "q.txt", "bbbbbb", { ifNoneMatch: "*" }),
    ]);
    expect([a.ok, b.ok].filter(Boolean)).toHaveLength(1);
    expect((await readdir(join(fx.base, ".capvault-meta"))).sort()).toHaveLength(2);
  });

  // The start's sweep (stale-temps.ts) walked at most 256 folders deep, so the identities of
  // files below were not in its `live` set and collectOrphans dropped their sidecars; the write
  // path takes such files (keys of 1,024 bytes, disk-deep-paths.node.test.ts). Found by a red-team pass.
  it("a file deeper than the sweep's bound keeps its content type across a restart's sweep", async () => {
    const deep = `${"d/".repeat(300)}f.md`;
    expectOk(await put(fx.storage, ROOT, deep, "# deep", { contentType: "text/markdown" }));
    expect(expectOk(await fx.storage.stat(entryAt(ROOT, deep)))).toMatchObject({ contentType: "text/markdown" });
    // The sweep spares sidecars newer than its start.
    await sleep(20);
    await fx.host.cleanStaleTemps();
    expect(expectOk(await fx.storage.stat(entryAt(ROOT, deep)))).toMatchObject({ contentType: "text/markdown" });
  });

  it("a sweep that could not see every folder drops no sidecar", async () => {
    expectOk(await put(fx.storage, ROOT, "x.md", "# x", { contentType: "text/markdown" }));
    // Around the vault: a tree deeper than any path the vault writes, and the file moved to its
    // bottom (the same inode, so the same identity): the sweep stops above it.
    const bottom = join(fx.base, "r", ...Array.from({ length: 610 }, () => "d"));
    await mkdir(bottom, { recursive: true });
    await rename(join(fx.base, "r", "x.md"), join(bottom, "x.md"));
    await sleep(20);
    await fx.host.cleanStaleTemps();
    await rename(join(bottom, "x.md"), join(fx.base, "r", "x.md"));
    expect(expectOk(await fx.storage.stat(entryAt(ROOT, "x.md")))).toMatchObject({ contentType: "text/markdown" });
  });
});
