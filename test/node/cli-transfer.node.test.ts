/**
 * The CLI's file and folder transfers against the real launcher: sftp-style
 * put/get naming, the cap's root as . and /, tree, cp and sync both ways
 * with --dry-run, skip-unchanged and --delete, 300 small files with their
 * in-flight requests counted, and local symlinks that must not be written
 * through. In-process through the same runner as the binary, for speed.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TransferReport } from "../../cli/transfer/transfer-report.ts";
import { AdminClient } from "../../clients/typescript/admin-client.ts";
import type { FsCap } from "../../clients/typescript/fs-cap.ts";
import type { FetchLike } from "../../clients/typescript/types.ts";
import { runInProcess } from "../cli-test-io.ts";
import { type SharedVault, sharedVault } from "./shared-vault.ts";

let vault: SharedVault;
let root: FsCap;
let tmp: string;
const env = () => ({ CAPVAULT_CAP: root.url });

beforeAll(async () => {
  [vault, tmp] = await Promise.all([
    sharedVault("cli-transfer"),
    mkdtemp(path.join(os.tmpdir(), "capvault-cli-transfer-")),
  ]);
  root = await new AdminClient(vault.url, vault.adminToken).mintRoot({ backend: "r2", prefix: "cli-transfer/" });
});

afterAll(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

/** Writes `files` (relative path → content) under a new folder of tmp. */
async function localTree(name: string, files: Record<string, string>): Promise<string> {
  const dir = path.join(tmp, name);
  for (const [relative, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, relative)), { recursive: true });
    await writeFile(path.join(dir, relative), content);
  }
  await mkdir(dir, { recursive: true });
  return dir;
}

/** Runs a folder command with --json and returns its report. */
async function report(args: string[], fetch?: FetchLike): Promise<TransferReport & { code: number }> {
  const run = await runInProcess([...args, "--json"], { env: env(), ...(fetch ? { fetch } : {}) });
  return { ...JSON.parse(run.out), code: run.code };
}

async function remoteExists(path: string): Promise<boolean> {
  return root.stat(path).then(
    () => true,
    () => false,
  );
}

describe("single files and listings", () => {
  it("put LOCAL [REMOTE] and get REMOTE [LOCAL] name the other side as sftp does", async () => {
    const local = await localTree("single", { "nested/note.md": "# note\n" });
    const file = path.join(local, "nested/note.md");
    await root.write("single/docs/keep.txt", "k");
    for (const remote of [["single/"], ["single/docs"], ["single/renamed.md"]]) {
      expect((await runInProcess(["put", file, ...remote], { env: env() })).code).toBe(0);
    }
    const put = await runInProcess(["put", file, "--json"], { env: env() });
    expect(JSON.parse(put.out)).toMatchObject({ path: "note.md", size: 7 });
    for (const remote of ["note.md", "single/note.md", "single/docs/note.md", "single/renamed.md"]) {
      expect(await root.readText(remote)).toBe("# note\n");
    }

    const down = path.join(tmp, "single-down");
    await mkdir(down);
    const get = await runInProcess(["get", "single/docs/note.md", down], { env: env() });
    expect(get.out).toBe(`downloaded single/docs/note.md to ${path.join(down, "note.md")} (7 B)\n`);
    expect(await readFile(path.join(down, "note.md"), "utf8")).toBe("# note\n");
    expect((await runInProcess(["get", "single/renamed.md", "-"], { env: env() })).out).toBe("# note\n");
  });

  it("ls . and ls / list the cap's root, like ls with no path", async () => {
    const plain = (await runInProcess(["ls"], { env: env() })).out;
    expect(plain).toContain("single/\n");
    for (const root of [".", "/", "./"]) expect((await runInProcess(["ls", root], { env: env() })).out).toBe(plain);
  });

  it("tree draws a folder and everything below it; --json nests it", async () => {
    await Promise.all([root.write("t/a.md", "aa"), root.write("t/sub/b.md", "b"), root.write("t/sub/deeper/c.md", "")]);
    const run = await runInProcess(["tree", "t"], { env: env() });
    expect(run.out).toBe(
      "t\n├── a.md\n└── sub/\n    ├── b.md\n    └── deeper/\n        └── c.md\n\n2 folders, 3 files\n",
    );
    expect((await runInProcess(["tree", "t", "-L", "1"], { env: env() })).out).toBe(
      "t\n├── a.md\n└── sub/\n\n1 folder, 1 file\n",
    );
    const json = JSON.parse((await runInProcess(["tree", "t", "--json"], { env: env() })).out);
    expect(json.entries[1]).toMatchObject({ name: "sub", type: "dir", children: [{ name: "b.md", size: 1 }, {}] });
  });
});

describe("folders", () => {
  it("sync up: --dry-run changes nothing, a second sync transfers 0 files, a same-size edit is caught by hash, --delete stays inside DST", async () => {
    const src = await localTree("sync-src", { "a.txt": "a", "sub/b.txt": "bb", "sub/deep/c.bin": "ccc" });
    await writeFile(path.join(tmp, "outside.txt"), "not in the folder");
    await symlink(path.join(tmp, "outside.txt"), path.join(src, "link.txt"));
    await root.write("sibling/keep.txt", "outside the target");

    const dry = await report(["sync", src, ":s", "--dry-run"]);
    expect(dry.actions).toEqual([
      { op: "upload", path: "a.txt", size: 1 },
      { op: "upload", path: "sub/b.txt", size: 2 },
      { op: "upload", path: "sub/deep/c.bin", size: 3 },
    ]);
    expect(await remoteExists("s")).toBe(false);

    const first = await report(["sync", src, ":s"]);
    expect(first).toMatchObject({
      code: 0,
      files: { transferred: 3, unchanged: 0 },
      bytes: 6,
      skippedLocal: ["link.txt"],
    });
    expect(await root.readText("s/sub/deep/c.bin")).toBe("ccc");
    expect(await remoteExists("s/link.txt")).toBe(false);

    const second = await report(["sync", src, ":s"]);
    expect(second).toMatchObject({ files: { transferred: 0, unchanged: 3 }, actions: [] });

    await writeFile(path.join(src, "a.txt"), "A");
    const edited = await report(["sync", src, ":s"]);
    expect(edited.actions).toEqual([{ op: "upload", path: "a.txt", size: 1 }]);
    expect(await root.readText("s/a.txt")).toBe("A");

    await root.write("s/sub/extra.txt", "extra");
    const dryDelete = await report(["sync", src, ":s", "--delete", "--dry-run"]);
    expect(dryDelete.actions).toEqual([{ op: "delete", path: "sub/extra.txt", size: 5 }]);
    expect(await remoteExists("s/sub/extra.txt")).toBe(true);
    const deleted = await report(["sync", src, ":s", "--delete"]);
    expect(deleted).toMatchObject({ files: { transferred: 0, deleted: 1 } });
    expect(await remoteExists("s/sub/extra.txt")).toBe(false);
    expect(await root.readText("sibling/keep.txt")).toBe("outside the target");
  });

  it("sync down, cp -r and get -r: skip unchanged, --delete only inside LOCAL, progress on a terminal", async () => {
    await Promise.all([root.write("d/x.txt", "x"), root.write("d/in/y.txt", "yy")]);
    const dst = path.join(tmp, "sync-dst");
    const tty = await runInProcess(["sync", ":d", dst], { env: env(), tty: true });
    expect(tty.code).toBe(0);
    expect(tty.out).toBe("downloaded 2 files (3 B), 0 unchanged\n");
    expect(tty.stderr).toContain("2/2 files  3 B / 3 B");
    expect(await readFile(path.join(dst, "in/y.txt"), "utf8")).toBe("yy");
    // Not a terminal: no progress, nothing on stderr.
    expect(await runInProcess(["sync", ":d", dst], { env: env() })).toMatchObject({
      code: 0,
      out: "downloaded 0 files (0 B), 2 unchanged\n",
      stderr: "",
    });

    await writeFile(path.join(dst, "in/junk.txt"), "junk");
    await writeFile(path.join(tmp, "beside-dst.txt"), "beside");
    const deleted = await report(["sync", ":d", dst, "--delete"]);
    expect(deleted.actions).toEqual([{ op: "delete", path: "in/junk.txt", size: 4 }]);
    expect((await readdir(path.join(dst, "in"))).sort()).toEqual(["y.txt"]);
    expect(await readFile(path.join(tmp, "beside-dst.txt"), "utf8")).toBe("beside");

    expect(await report(["cp", "-r", ":d", path.join(tmp, "cp-dst")])).toMatchObject({ files: { transferred: 2 } });
    expect(await report(["get", "-r", "d", `${tmp}/get-dst/`])).toMatchObject({ files: { transferred: 2 } });
    expect(await readFile(path.join(tmp, "get-dst/d/x.txt"), "utf8")).toBe("x");
    expect(await report(["put", "-r", path.join(tmp, "cp-dst"), "put-r/"])).toMatchObject({
      files: { transferred: 2 },
    });
    expect(await root.readText("put-r/cp-dst/in/y.txt")).toBe("yy");
  });

  it("a local symlink where a download would go is neither followed nor replaced", async () => {
    await Promise.all([root.write("links/dir/planted.txt", "evil"), root.write("links/file.txt", "evil")]);
    const outside = await localTree("links-outside", { "target.txt": "untouched" });
    const dst = await localTree("links-dst", {});
    await symlink(outside, path.join(dst, "dir"));
    await symlink(path.join(outside, "target.txt"), path.join(dst, "file.txt"));
    const run = await report(["get", "-r", "links", dst]);
    expect(run.code).toBe(1);
    expect(run.issues.map((i) => `${i.code} ${i.path}`).sort()).toEqual([
      "symlink dir/planted.txt",
      "symlink file.txt",
    ]);
    expect(await readdir(outside)).toEqual(["target.txt"]);
    expect(await readFile(path.join(outside, "target.txt"), "utf8")).toBe("untouched");
  });

  it("300 small files go up several at a time (counted, at most 8), and a second sync sends none", async () => {
    const files: Record<string, string> = {};
    // The concurrency is counted, not timed, so 300 files show it as well as
    // 1,000 would, at a third of the suite's time.
    for (let i = 0; i < 300; i++) files[`n${i}.txt`] = `file ${i}\n`;
    const src = await localTree("many", files);
    let inFlight = 0;
    let peak = 0;
    let puts = 0;
    const counting: FetchLike = async (input, init) => {
      if (init?.method !== "PUT") return fetch(input, init);
      puts++;
      peak = Math.max(peak, ++inFlight);
      try {
        return await fetch(input, init);
      } finally {
        inFlight--;
      }
    };
    const first = await report(["sync", src, ":many"], counting);
    expect(first).toMatchObject({ code: 0, files: { transferred: 300, failed: 0 } });
    expect(puts).toBe(300);
    expect(peak).toBeGreaterThan(1);
    expect(peak).toBeLessThanOrEqual(8);

    puts = 0;
    const second = await report(["sync", src, ":many"], counting);
    expect(second).toMatchObject({ code: 0, files: { transferred: 0, unchanged: 300 } });
    expect(puts).toBe(0);
  }, 120_000); // 300 real uploads: seconds on an idle machine, about 20 s on two busy shared cores.
});
