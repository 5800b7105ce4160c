/**
 * Folder transfers, path spellings and durations without a vault: a fetch
 * double plays the server, including a hostile one whose listings carry
 * names that, joined naively, would write outside LOCAL. The same commands
 * against the real launcher are in test/node/cli-transfer.node.test.ts.
 */
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FetchLike } from "../../clients/typescript/types.ts";
import { runInProcess } from "../../test/cli-test-io.ts";
import { parseDuration } from "../duration-option.ts";
import { Limiter } from "./limiter.ts";
import { localFileTarget, localFolderTarget } from "./local-target.ts";

const CAP = `http://vault.test/object/${"abcdefghijklmnopqrstuvwxyz234567"}`;
const env = { CAPVAULT_CAP: CAP };
const md5 = (text: string) => createHash("md5").update(text).digest("hex");
const json = (status: number, value: unknown) =>
  new Response(JSON.stringify(value), { status, headers: { "content-type": "application/json" } });

/** A vault double: `tree` maps folder paths to listings, `files` paths to contents; records every request. */
function server(tree: Record<string, unknown[]>, files: Record<string, string>, etags: Record<string, string> = {}) {
  const requests: string[] = [];
  const fetch: FetchLike = async (input, init) => {
    const url = new URL(input);
    const at = url.searchParams.get("path") ?? "";
    const op = url.pathname.slice(url.pathname.lastIndexOf("/") + 1);
    requests.push(`${init?.method ?? "GET"} ${op} ${at}`);
    if (op === "list") {
      const entries = tree[at];
      return entries ? json(200, { entries, cursor: null }) : json(404, { error: { code: "not_found", message: "x" } });
    }
    if (op === "stat") {
      if (tree[at]) return json(200, { type: "dir" });
      return json(404, { error: { code: "not_found", message: "nothing at that path" } });
    }
    if (op === "file" && (init?.method ?? "GET") === "GET" && files[at] !== undefined) {
      const body = files[at]!;
      return new Response(body, {
        headers: { etag: `"${etags[at] ?? md5(body)}"`, "content-length": String(body.length) },
      });
    }
    if (op === "file" && init?.method === "PUT") return json(201, { size: 0, etag: md5("") });
    return json(404, { error: { code: "not_found", message: "nothing at that path" } });
  };
  return { fetch, requests };
}

let tmp: string;
beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), "capvault-cli-transfer-"));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe("durations", () => {
  it("take seconds, units and combinations; refuse zero, fractions, unknown units and overflow", () => {
    expect(["3600", "90s", "30m", "1h", "7d", "2w", "1h30m", "1d12h"].map(parseDuration)).toEqual([
      3600, 90, 1800, 3600, 604_800, 1_209_600, 5400, 129_600,
    ]);
    for (const bad of ["0", "0m", "-5", "1.5h", "1y", "h", "", "1h 30m", "99999999999999999999d"]) {
      expect(parseDuration(bad)).toBeNull();
    }
  });

  it("share --ttl 1h sends 3600 seconds", async () => {
    const calls: unknown[] = [];
    const fetch: FetchLike = async (_input, init) => {
      calls.push(JSON.parse(String(init?.body)));
      return json(201, { token: "c".repeat(32), url: "x", id: "k", rights: ["read"], expiresAt: null });
    };
    expect((await runInProcess(["share", "notes", "--ttl", "1h"], { fetch, env })).code).toBe(0);
    expect(calls).toEqual([{ path: "notes", rights: ["read", "list"], ttlSeconds: 3600 }]);
  });
});

describe("the cap's root is ., ./ or /; other paths travel unchanged", () => {
  it.each([["."], ["./"], ["/"], [""]])("ls %j lists the root", async (arg) => {
    const { fetch, requests } = server({ "": [{ name: "a", type: "file", size: 1 }] }, {});
    const run = await runInProcess(["ls", arg], { fetch, env });
    expect(run).toMatchObject({ code: 0, out: "a\n" });
    expect(requests).toEqual(["GET list "]);
  });

  it("/etc/passwd is not rewritten: the vault judges it", async () => {
    const { fetch, requests } = server({}, {});
    await runInProcess(["cat", "/etc/passwd"], { fetch, env });
    await runInProcess(["ls", "/etc"], { fetch, env });
    expect(requests).toEqual(["GET file /etc/passwd", "GET list /etc"]);
  });
});

describe("put and get pick the other side's name as sftp does", () => {
  it("put LOCAL → its name at the root; REMOTE/ or an existing folder → inside; else REMOTE", async () => {
    const local = path.join(tmp, "nested", "b.txt");
    await mkdir(path.dirname(local), { recursive: true });
    await writeFile(local, "b");
    const { fetch, requests } = server({ docs: [] }, {});
    for (const remote of [[], ["dir/"], ["docs"], ["new-name.txt"], ["."]]) {
      expect((await runInProcess(["put", local, ...remote], { fetch, env })).code).toBe(0);
    }
    expect(requests.filter((r) => r.startsWith("PUT"))).toEqual([
      "PUT file b.txt",
      "PUT file dir/b.txt",
      "PUT file docs/b.txt",
      "PUT file new-name.txt",
      "PUT file b.txt",
    ]);
  });

  it("get REMOTE LOCAL: into an existing folder or LOCAL/, else to LOCAL; - is stdout", async () => {
    const { fetch } = server({}, { "notes/a.md": "# a" });
    const folder = path.join(tmp, "get-into");
    await mkdir(folder);
    expect((await runInProcess(["get", "notes/a.md", folder], { fetch, env })).code).toBe(0);
    expect(await readFile(path.join(folder, "a.md"), "utf8")).toBe("# a");
    await runInProcess(["get", "notes/a.md", `${folder}/`], { fetch, env });
    const renamed = await runInProcess(["get", "notes/a.md", path.join(folder, "b.md"), "--json"], { fetch, env });
    expect(JSON.parse(renamed.out)).toEqual({
      path: "notes/a.md",
      local: path.join(folder, "b.md"),
      size: 3,
      etag: md5("# a"),
    });
    expect((await readdir(folder)).sort()).toEqual(["a.md", "b.md"]);
    expect((await runInProcess(["get", "notes/a.md", "-"], { fetch, env })).out).toBe("# a");
  });

  it("without LOCAL, get writes ./NAME (get -r of the root: the current folder)", async () => {
    expect(await localFileTarget(undefined, "a.md")).toBe("a.md");
    expect(localFolderTarget(undefined, "notes")).toBe("notes");
    expect(localFolderTarget(undefined, "")).toBe(".");
    expect(localFolderTarget("out/", "notes")).toBe(path.join("out", "notes"));
    expect(localFolderTarget("out", "notes")).toBe("out");
  });

  it("a download whose bytes do not match the etag is refused and leaves no file, not even a temp", async () => {
    const { fetch } = server({}, { "x.bin": "tampered" }, { "x.bin": md5("original") });
    const folder = path.join(tmp, "integrity");
    await mkdir(folder);
    const run = await runInProcess(["get", "x.bin", folder], { fetch, env });
    expect(run).toMatchObject({
      code: 1,
      stderr: "capvault: integrity: the bytes received do not match the vault's etag\n",
    });
    expect(await readdir(folder)).toEqual([]);
  });
});

describe("a hostile listing cannot write outside LOCAL", () => {
  it("get -r and sync refuse .., separators, control characters, duplicates and local symlinks", async () => {
    const outside = path.join(tmp, "outside");
    const local = path.join(tmp, "hostile-local");
    await mkdir(outside);
    await mkdir(local);
    await writeFile(path.join(outside, "target.txt"), "untouched");
    await symlink(path.join(outside, "target.txt"), path.join(local, "link.txt"));
    await symlink(outside, path.join(local, "linkdir"));
    await writeFile(path.join(local, "extra.txt"), "keep me: --delete must not run on a partial view");
    const file = (name: string) => ({ name, type: "file", size: 4, etag: md5("evil") });
    const tree = {
      "": [
        { name: "..", type: "dir" },
        file("../escape.txt"),
        file("/tmp/absolute.txt"),
        file("a\\..\\..\\b.txt"),
        file("bell\u0007.txt"),
        file(""),
        file("link.txt"),
        { name: "linkdir", type: "dir" },
        { name: "ok.txt", type: "file", size: 2, etag: md5("ok") },
        { name: "ok.txt", type: "file", size: 2, etag: md5("ok") },
        { name: "sub", type: "dir" },
      ],
      "..": [file("escape2.txt")],
      linkdir: [file("planted.txt")],
      sub: [{ name: "deep.txt", type: "file", size: 4, etag: md5("deep") }],
    };
    const files: Record<string, string> = {
      "ok.txt": "ok",
      "sub/deep.txt": "deep",
      "linkdir/planted.txt": "evil",
      "link.txt": "evil",
    };
    const { fetch, requests } = server(tree, files);
    const run = await runInProcess(["sync", ":", local, "--delete", "--json"], { fetch, env });
    expect(run.code).toBe(1);
    const report = JSON.parse(run.out);
    expect(report.deleteSkipped).toBe(true);
    expect(report.files).toMatchObject({ transferred: 2, deleted: 0 });
    expect(report.issues.map((i: { path: string; code: string }) => `${i.code} ${i.path}`).sort()).toEqual([
      "symlink link.txt",
      "symlink linkdir/planted.txt",
      "unsafe_name ",
      "unsafe_name ..",
      "unsafe_name ../escape.txt",
      "unsafe_name /tmp/absolute.txt",
      "unsafe_name a\\..\\..\\b.txt",
      "unsafe_name bell\u0007.txt",
      "unsafe_name ok.txt",
    ]);
    expect(await readFile(path.join(local, "ok.txt"), "utf8")).toBe("ok");
    expect(await readFile(path.join(local, "sub/deep.txt"), "utf8")).toBe("deep");
    expect(await readFile(path.join(local, "extra.txt"), "utf8")).toMatch(/^keep me/);
    expect(await readdir(outside)).toEqual(["target.txt"]);
    expect(await readFile(path.join(outside, "target.txt"), "utf8")).toBe("untouched");
    expect((await readdir(tmp)).filter((n) => n.includes("escape"))).toEqual([]);
    // Nothing was even asked for under a refused name.
    expect(requests.filter((r) => /escape|absolute|bell|\.\./.test(r))).toEqual([]);
    // Human output escapes the names it reports.
    const human = await runInProcess(["get", "-r", ".", local], { fetch, env });
    expect(human.stderr).toContain("capvault: bell\\x07.txt: unsafe_name: ");
    expect(human.stderr).not.toMatch(/\u0007/);
  });
});

describe("--delete needs the whole listing", () => {
  it("a listing that fails on its second page deletes nothing and transfers nothing", async () => {
    const local = await mkdtemp(path.join(tmp, "paged-"));
    await writeFile(path.join(local, "only-local.txt"), "would be deleted by a sync that trusted page one");
    const requests: string[] = [];
    const fetch: FetchLike = async (input, init) => {
      const url = new URL(input);
      requests.push(
        `${init?.method ?? "GET"} ${url.pathname.split("/").pop()} ${url.searchParams.get("cursor") ?? ""}`,
      );
      if (url.searchParams.get("cursor") === null)
        return json(200, { entries: [{ name: "a.txt", type: "file", size: 1, etag: md5("a") }], cursor: "page-2" });
      return json(503, { error: { code: "unavailable", message: "storage backend failed" } });
    };
    for (const direction of [
      [":", local],
      [local, ":"],
    ]) {
      const run = await runInProcess(["sync", ...direction, "--delete"], { fetch, env });
      expect(run).toMatchObject({ code: 3, stderr: "capvault: unavailable: storage backend failed\n" });
    }
    expect(await readdir(local)).toEqual(["only-local.txt"]);
    expect(requests.filter((r) => !r.startsWith("GET list"))).toEqual([]);
  });
});

describe("a busy vault", () => {
  it("a 503 unavailable is retried; other refusals are not", async () => {
    const local = await mkdtemp(path.join(tmp, "busy-"));
    await writeFile(path.join(local, "a.txt"), "a");
    await writeFile(path.join(local, "b.txt"), "b");
    const puts: string[] = [];
    const fetch: FetchLike = async (input, init) => {
      const at = new URL(input).searchParams.get("path") ?? "";
      if (init?.method !== "PUT") return json(404, { error: { code: "not_found", message: "nothing at that path" } });
      puts.push(at);
      if (at === "up/a.txt" && puts.length === 1)
        return json(503, { error: { code: "unavailable", message: "too many uploads in progress" } });
      if (at === "up/b.txt") return json(403, { error: { code: "forbidden", message: "no" } });
      return json(201, { size: 1, etag: md5("a") });
    };
    const run = await runInProcess(["cp", "-r", local, ":up", "--json", "--transfers", "1"], { fetch, env });
    expect(JSON.parse(run.out)).toMatchObject({ files: { transferred: 1, failed: 1 } });
    expect(puts).toEqual(["up/a.txt", "up/a.txt", "up/b.txt"]);
  });
});

describe("the limiter", () => {
  it("never runs more than its limit at once, and runs that many when it can", async () => {
    const limiter = new Limiter(3);
    let active = 0;
    let peak = 0;
    const releases: (() => void)[] = [];
    const tasks = Array.from({ length: 10 }, () =>
      limiter.run(async () => {
        active++;
        peak = Math.max(peak, active);
        await new Promise<void>((resolve) => releases.push(resolve));
        active--;
      }),
    );
    // Release tasks one at a time as they start, and let a newcomer race each release.
    for (let done = 0; done < 10; done++) {
      while (releases.length === 0) await new Promise((resolve) => setImmediate(resolve));
      releases.shift()!();
      tasks.push(limiter.run(async () => {}));
    }
    await Promise.all(tasks);
    expect(peak).toBe(3);
    expect(limiter.peak).toBe(3);
  });
});
