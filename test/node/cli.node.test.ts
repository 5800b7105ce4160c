/**
 * The CLI end to end against the real launcher: the binary spawned as users
 * run it (exit codes, stdin/stdout byte streams, --help), and every command
 * in-process through the same runner for speed.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, openSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ARGUMENT_WARNING } from "../../cli/cap-source.ts";
import { AdminClient } from "../../clients/typescript/admin-client.ts";
import type { FsCap } from "../../clients/typescript/fs-cap.ts";
import { PROJECT_ROOT } from "../../launcher/build-worker.ts";
import { runInProcess } from "../cli-test-io.ts";
import { type SharedVault, sharedVault } from "./shared-vault.ts";

const TSX = path.join(PROJECT_ROOT, "node_modules/.bin/tsx");
const ENTRY = path.join(PROJECT_ROOT, "cli/capvault.ts");

let vault: SharedVault;
let root: FsCap;
let tmp: string;
const md5 = (data: Uint8Array) => createHash("md5").update(data).digest("hex");
const sha256 = (data: Uint8Array) => createHash("sha256").update(data).digest("hex");

interface Spawned {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

/** Runs the real binary. `stdin` is bytes to pipe, or a file path to attach as fd 0 (`< file`). */
function capvault(
  args: string[],
  options: { env?: Record<string, string>; stdin?: Uint8Array | { file: string } } = {},
): Promise<Spawned> {
  return new Promise((resolve, reject) => {
    const fd = options.stdin && "file" in options.stdin ? openSync(options.stdin.file, "r") : undefined;
    const child = spawn(TSX, [ENTRY, ...args], {
      cwd: PROJECT_ROOT,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...options.env },
      stdio: [fd ?? "pipe", "pipe", "pipe"],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout!.on("data", (c: Buffer) => out.push(c));
    child.stderr!.on("data", (c: Buffer) => err.push(c));
    child.on("error", reject);
    child.on("close", (code) => {
      if (fd !== undefined) closeSync(fd);
      resolve({ code, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString("utf8") });
    });
    if (fd === undefined) child.stdin!.end(options.stdin instanceof Uint8Array ? options.stdin : undefined);
  });
}

beforeAll(async () => {
  [vault, tmp] = await Promise.all([sharedVault("cli"), mkdtemp(path.join(os.tmpdir(), "capvault-cli-"))]);
  root = await new AdminClient(vault.url, vault.adminToken).mintRoot({
    backend: "r2",
    prefix: "cli-test/",
    label: "cli",
  });
});

afterAll(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe("the binary", () => {
  it("exit codes: 0 help, 2 usage, 1 refused, 3 unreachable", async () => {
    const [help, usage, refused, unreachable] = await Promise.all([
      capvault(["--help"]),
      capvault(["ls", "--no-such-flag"], { env: { CAPVAULT_CAP: root.url } }),
      capvault(["cat", "../../../etc/passwd"], { env: { CAPVAULT_CAP: root.url } }),
      capvault(["info", `http://127.0.0.1:9/object/${"a".repeat(32)}`]),
    ]);
    expect(help.code).toBe(0);
    expect(help.stdout.toString()).toContain("Commands:");
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("Unknown option '--no-such-flag'");
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe("capvault: path_escapes: path escapes\n");
    expect(refused.stdout.length).toBe(0);
    expect(unreachable.code).toBe(3);
    expect(unreachable.stderr).toMatch(
      /^capvault: warning: a cap URL given as an argument .*\ncapvault: unavailable: vault unreachable/,
    );
    expect(unreachable.stderr).not.toContain("a".repeat(32));
  });

  it("put from piped stdin and cat to stdout are binary-safe", async () => {
    const bytes = new Uint8Array(300_000).map((_, i) => (i * 31 + (i >> 8)) % 256);
    const env = { CAPVAULT_CAP: root.url };
    const put = await capvault(["put", "-", "bin/blob.bin", "--json"], { env, stdin: bytes });
    expect(put.stderr).toBe("");
    expect(put.code).toBe(0);
    expect(JSON.parse(put.stdout.toString())).toEqual({
      path: "bin/blob.bin",
      created: true,
      size: bytes.length,
      etag: md5(bytes),
      sha256: sha256(bytes),
    });
    const cat = await capvault(["cat", "bin/blob.bin"], { env });
    expect(cat.code).toBe(0);
    expect(md5(cat.stdout)).toBe(md5(bytes));
  });

  it("put with stdin redirected from a file streams it with its size", async () => {
    const file = path.join(tmp, "redirect.bin");
    const bytes = new Uint8Array(100_000).map((_, i) => i % 251);
    await writeFile(file, bytes);
    const put = await capvault(["put", root.url, "-", "bin/redirected.bin"], { stdin: { file } });
    expect(put.code).toBe(0);
    expect(put.stdout.toString()).toBe(`created bin/redirected.bin (97.7 KiB, etag ${md5(bytes)})\n`);
    expect(md5(await root.read("bin/redirected.bin"))).toBe(md5(bytes));
  });

  it("serve --help is the launcher's own help", async () => {
    const run = await capvault(["serve", "--help"]);
    expect(run.code).toBe(0);
    expect(run.stdout.toString()).toContain("--port");
  });
});

describe("--json when the vault is unreachable", () => {
  // Port 9 (discard) on loopback: nothing listens, the connection is refused.
  const env = { CAPVAULT_CAP: `http://127.0.0.1:9/object/${"a".repeat(32)}` };
  it.each(
    [["ls"], ["ls", "docs"], ["tree"], ["info"], ["stat", "x"], ["versions", "x"], ["children"]].map((a) => [
      a.join(" "),
      a,
    ]),
  )("%s: stdout is one whole JSON document, the error on stderr, exit 3", async (_name, args) => {
    const run = await runInProcess([...args, "--json"], { env });
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/^capvault: unavailable: /m);
    const doc = JSON.parse(run.out) as { error?: { code?: string } };
    expect(doc.error?.code).toBe("unavailable");
    expect(run.out.trimEnd().split("\n")).toHaveLength(1);
  });
});

describe("commands against the vault", () => {
  const env = () => ({ CAPVAULT_CAP: root.url });

  it("mint (admin) prints only the cap URL on stdout, and the cap works", async () => {
    const adminEnv = { CAPVAULT_URL: vault.url, CAPVAULT_ADMIN_TOKEN: vault.adminToken };
    const run = await runInProcess(["mint", "cli-minted/", "--rights", "read,list", "--label", "minted"], {
      env: adminEnv,
    });
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/object\/[a-z2-7]{48}\n$/);
    expect(run.stderr).toMatch(/^minted root \w+: rights read,list, expires never\n$/);
    const info = await runInProcess(["info", run.out.trim(), "--json"]);
    expect(JSON.parse(info.out)).toMatchObject({ rights: ["read", "list"], label: "minted", parent: null });

    const json = await runInProcess(["mint", "cli-minted-2/", "--json", "--ttl", "60"], { env: adminEnv });
    expect(JSON.parse(json.out)).toMatchObject({
      url: expect.stringMatching(/\/object\/[a-z2-7]{48}$/),
      rights: ["read", "write", "delete", "list", "subdir"],
    });

    const denied = await runInProcess(["mint", "x/"], { env: { ...adminEnv, CAPVAULT_ADMIN_TOKEN: "wrong" } });
    expect(denied.code).toBe(1);
    expect(denied.stderr).toMatch(/^capvault: unauthorized: /);
  });

  it("info, put, stat, ls, cat, mv, rm", async () => {
    const info = await runInProcess(["info"], { env: env() });
    expect(info.out).toMatch(/^id +\w+\nrights +read, write, delete, list, subdir\nlabel +cli\n/);

    const file = path.join(tmp, "note.md");
    await writeFile(file, "# note\n");
    const put = await runInProcess(["put", file, "docs/note.md"], { env: env() });
    expect(put).toMatchObject({ code: 0, out: `created docs/note.md (7 B, etag ${md5(Buffer.from("# note\n"))})\n` });
    expect((await runInProcess(["put", file, "docs/note.md", "-n"], { env: env() })).stderr).toBe(
      "capvault: precondition_failed: precondition failed\n",
    );

    const stat = await runInProcess(["stat", "docs/note.md", "--json"], { env: env() });
    expect(JSON.parse(stat.out)).toMatchObject({
      type: "file",
      size: 7,
      contentType: expect.stringContaining("text/markdown"),
    });

    await runInProcess(["put", "-", "docs/sub/x.txt"], { env: env(), stdin: "x" });
    expect((await runInProcess(["ls", "docs"], { env: env() })).out).toBe("note.md\nsub/\n");
    expect(
      JSON.parse((await runInProcess(["ls", "docs", "--json"], { env: env() })).out).entries.map(
        (e: { name: string }) => e.name,
      ),
    ).toEqual(["note.md", "sub"]);

    expect((await runInProcess(["cat", "docs/note.md"], { env: env() })).out).toBe("# note\n");

    expect((await runInProcess(["mv", "docs/sub/x.txt", "docs/note.md"], { env: env() })).stderr).toMatch(
      /^capvault: conflict: /,
    );
    expect((await runInProcess(["mv", "docs/sub/x.txt", "docs/note.md", "--overwrite"], { env: env() })).code).toBe(0);
    expect((await runInProcess(["cat", "docs/note.md"], { env: env() })).out).toBe("x");

    expect((await runInProcess(["rm", "docs/note.md"], { env: env() })).code).toBe(0);
    const gone = await runInProcess(["cat", "docs/note.md"], { env: env() });
    expect(gone).toMatchObject({ code: 1, stderr: "capvault: not_found: nothing at that path\n" });
    expect((await runInProcess(["rm", "docs/missing", "--json"], { env: env() })).code).toBe(1);
  });

  it("mkdir makes a folder that stays while empty; rmdir and rm -d remove it only once empty", async () => {
    expect(await runInProcess(["mkdir", "plans/2026"], { env: env() })).toMatchObject({ code: 0, out: "" });
    expect((await runInProcess(["ls", "plans"], { env: env() })).out).toBe("2026/\n");
    expect(JSON.parse((await runInProcess(["mkdir", "plans/2026", "--json"], { env: env() })).out)).toEqual({
      made: "plans/2026",
    });
    expect(await runInProcess(["rmdir", "plans"], { env: env() })).toMatchObject({
      code: 1,
      stderr: "capvault: conflict: that folder is not empty\n",
    });
    expect(JSON.parse((await runInProcess(["rmdir", "plans/2026", "--json"], { env: env() })).out)).toEqual({
      removed: "plans/2026",
    });
    expect((await runInProcess(["ls", "plans"], { env: env() })).out).toBe("");
    expect((await runInProcess(["rm", "-d", "plans"], { env: env() })).code).toBe(0);
    expect((await runInProcess(["stat", "plans"], { env: env() })).code).toBe(1);
    expect(await runInProcess(["rmdir", ""], { env: env() })).toMatchObject({
      code: 1,
      stderr: "capvault: invalid_path: a folder operation needs a folder name\n",
    });
  });

  it("share, children, revoke --child, revoke", async () => {
    await root.write("team/readme.md", "hi team");
    const share = await runInProcess(
      ["share", "team", "--rights", "read,list,subdir", "--ttl", "never", "--label", "helper"],
      {
        env: env(),
      },
    );
    expect(share.code).toBe(0);
    const childUrl = share.out.trim();
    expect(childUrl).toMatch(/\/object\/[a-z2-7]{48}$/);
    expect((await runInProcess(["cat", childUrl, "readme.md"])).out).toBe("hi team");
    const refused = await runInProcess(["put", childUrl, "-", "evil"], { stdin: "x" });
    expect(refused).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/^capvault: warning: .+\ncapvault: forbidden: .+\n$/),
    });
    const escalate = await runInProcess(["share", childUrl, "", "--rights", "read,write"]);
    expect(escalate.code).toBe(1);
    expect(escalate.stderr).toMatch(/\ncapvault: forbidden: /);

    const grandchild = (await runInProcess(["share", childUrl, "", "--rights", "read", "--json"])).out;
    const grandUrl = JSON.parse(grandchild).url as string;

    const children = JSON.parse((await runInProcess(["children", "--json"], { env: env() })).out).children as {
      id: string;
      path: string;
      label: string;
    }[];
    const helper = children.find((c) => c.label === "helper")!;
    expect(helper.path).toBe("team");
    expect((await runInProcess(["children"], { env: env() })).out).toMatch(
      new RegExp(`^ID +RIGHTS +EXPIRES +PATH +LABEL\\n(.*\\n)*${helper.id} +read,list,subdir +never +team +helper\\n`),
    );

    const revoked = await runInProcess(["revoke", "--child", helper.id], { env: env() });
    expect(revoked).toMatchObject({ code: 0, out: `revoked child ${helper.id}\n` });
    expect((await runInProcess(["info", childUrl])).stderr).toBe(
      `${ARGUMENT_WARNING}capvault: no_such_cap: no such capability\n`,
    );
    expect((await runInProcess(["info", grandUrl])).code).toBe(1);

    const temp = (await runInProcess(["share", "team"], { env: env() })).out.trim();
    const self = await runInProcess(["revoke", temp, "--self", "--json"]);
    expect(JSON.parse(self.out)).toMatchObject({ complete: true, revoked: expect.any(String) });
    expect((await runInProcess(["ls", temp])).code).toBe(1);
    expect((await runInProcess(["info"], { env: env() })).code).toBe(0);
  });

  it("the hermes-fs-as-cap test vector through the CLI", async () => {
    await root.write("skills/hermes-fs-as-cap/SKILL.md", "skill");
    const sub = (await runInProcess(["share", "skills"], { env: env() })).out.trim();
    expect((await runInProcess(["cat", sub, "hermes-fs-as-cap/SKILL.md"])).out).toBe("skill");
    expect((await runInProcess(["cat", sub, "../other-skill/SKILL.md"])).stderr).toBe(
      `${ARGUMENT_WARNING}capvault: path_escapes: path escapes\n`,
    );
    expect((await runInProcess(["cat", "/etc/passwd"], { env: env() })).stderr).toBe(
      "capvault: absolute_path: absolute paths forbidden\n",
    );
  });

  it("no output or error of any command contains the root cap's token", async () => {
    const secret = root.url.slice(root.url.lastIndexOf("/") + 1);
    const runs = await Promise.all([
      runInProcess(["info"], { env: env() }),
      runInProcess(["ls", "--json"], { env: env() }),
      runInProcess(["children", "--json"], { env: env() }),
      runInProcess(["stat", "nope"], { env: env() }),
      runInProcess(["cat", "../x"], { env: env() }),
      runInProcess(["revoke", "--child", "aaaaaaaaaaaaaaaa"], { env: env() }),
    ]);
    for (const run of runs) {
      expect(run.out).not.toContain(secret);
      expect(run.stderr).not.toContain(secret);
    }
  });
});
