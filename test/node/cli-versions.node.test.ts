/**
 * The CLI's version commands against the real launcher: `versions`,
 * `restore`, `redact` and `cat --version` in-process, and `watch` as the
 * real binary, since it runs until a signal or a revocation ends it.
 */
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AdminClient } from "../../clients/typescript/admin-client.ts";
import type { FsCap } from "../../clients/typescript/fs-cap.ts";
import { PROJECT_ROOT } from "../../launcher/build-worker.ts";
import { runInProcess } from "../cli-test-io.ts";
import { type SharedVault, sharedVault } from "./shared-vault.ts";
import { NODE_ARGS } from "./test-vault.ts";

const ENTRY = path.join(PROJECT_ROOT, "cli/capvault.ts");

let vault: SharedVault;
let root: FsCap;
const running: ChildProcess[] = [];

beforeAll(async () => {
  vault = await sharedVault("cli-versions");
  root = await new AdminClient(vault.url, vault.adminToken).mintRoot({
    backend: "r2",
    prefix: "cli-versions/",
    label: "cli-versions",
  });
});

afterAll(async () => {
  for (const child of running) if (child.exitCode === null) child.kill("SIGKILL");
});

const env = (cap: FsCap = root) => ({ CAPVAULT_CAP: cap.url });

/** Table rows of `capvault versions` below the header, split into cells. */
const rows = (out: string) =>
  out
    .trimEnd()
    .split("\n")
    .slice(1)
    .map((line) => line.split(/ {2,}/));

describe("versions, restore, redact, cat --version", () => {
  it("lists a deleted file's history, prints an old version, restores it, redacts one", async () => {
    await root.write("plan.md", "v1");
    await root.write("plan.md", "v22");
    await root.delete("plan.md");
    const listed = await runInProcess(["versions", "plan.md"], { env: env() });
    expect(listed.code).toBe(0);
    expect(listed.out.split("\n")[0]).toMatch(/^ID +OPERATION +WHEN +SIZE +SHA256 +ACTOR$/);
    const table = rows(listed.out);
    expect(table.map((r) => r[1])).toEqual(["deleted", "modified", "created"]);
    expect(table.map((r) => r[3])).toEqual(["3 B", "3 B", "2 B"]);
    const [deleted, , created] = (await root.versions("plan.md")).versions;
    expect(table[2]).toEqual([
      created!.id,
      "created",
      expect.any(String),
      "2 B",
      created!.sha256!.slice(0, 12),
      root.id,
    ]);

    const json = JSON.parse(
      (await runInProcess(["versions", "plan.md", "--json", "--limit", "2"], { env: env() })).out,
    );
    expect(json).toEqual({ path: "plan.md", versions: (await root.versions("plan.md")).versions.slice(0, 2) });

    expect((await runInProcess(["cat", "--version", created!.id], { env: env() })).out).toBe("v1");
    const restored = await runInProcess(["restore", deleted!.id, "--json"], { env: env() });
    expect(JSON.parse(restored.out)).toMatchObject({ restored: deleted!.id, path: "plan.md", size: 3 });
    expect(await root.readText("plan.md")).toBe("v22");
    expect(rows((await runInProcess(["versions", "plan.md"], { env: env() })).out).map((r) => r[1])).toEqual([
      "created",
      "deleted",
      "modified",
      "created",
    ]);

    expect(await runInProcess(["redact", created!.id], { env: env() })).toMatchObject({
      code: 0,
      out: `redacted version ${created!.id}\n`,
    });
    const after = rows((await runInProcess(["versions", "plan.md"], { env: env() })).out);
    expect(after.at(-1)).toEqual([created!.id, "created", expect.any(String), "2 B", "-", root.id, "redacted"]);
    expect(await runInProcess(["cat", "--version", created!.id], { env: env() })).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/^capvault: not_found: /),
    });
  });

  it("refusals: rights, ids outside a child's subtree, hostile paths, usage", async () => {
    await root.write("kept.md", "one");
    await root.write("kept.md", "two");
    const [newest, oldest] = (await root.versions("kept.md")).versions;
    const readOnly = await root.subdir({ path: "", rights: ["read", "list"] });
    expect(await runInProcess(["restore", oldest!.id], { env: env(readOnly) })).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/^capvault: forbidden: /),
    });
    expect(await runInProcess(["redact", newest!.id], { env: env(readOnly) })).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/^capvault: forbidden: /),
    });
    const child = await root.subdir({ path: "team" });
    expect(await runInProcess(["restore", oldest!.id], { env: env(child) })).toMatchObject({
      code: 1,
      stderr: "capvault: not_found: no such version\n",
    });
    expect(await runInProcess(["versions", "../kept.md"], { env: env(child) })).toMatchObject({
      code: 1,
      stderr: "capvault: path_escapes: path escapes\n",
    });
    expect(await root.readText("kept.md")).toBe("two");
    expect((await runInProcess(["versions"], { env: env() })).code).toBe(2);
    expect((await runInProcess(["versions", "kept.md", "--limit", "0"], { env: env() })).code).toBe(2);
    expect((await runInProcess(["cat", "kept.md", "--version", oldest!.id], { env: env() })).code).toBe(2);
  });
});

interface Watcher {
  /** Resolves once stdout holds `n` lines. */
  lines(n: number): Promise<string[]>;
  exited: Promise<{ code: number | null; stdout: string; stderr: string }>;
  child: ChildProcess;
}

/** The real binary, started with plain node (no tsx parent in between, so signals reach it). */
function watch(args: string[], cap: FsCap): Watcher {
  const child = spawn(process.execPath, [...NODE_ARGS, ENTRY, "watch", ...args], {
    cwd: PROJECT_ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", CAPVAULT_CAP: cap.url },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.push(child);
  let stdout = "";
  let stderr = "";
  const waiting: { n: number; resolve: (lines: string[]) => void }[] = [];
  const settle = () => {
    const lines = stdout.split("\n").slice(0, -1);
    for (const w of waiting.filter((w) => lines.length >= w.n)) {
      waiting.splice(waiting.indexOf(w), 1);
      w.resolve(lines.slice(0, w.n));
    }
  };
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
    settle();
  });
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  const exited = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on("close", (code) => resolve({ code, stdout, stderr })),
  );
  return {
    child,
    exited,
    lines: (n) =>
      new Promise((resolve, reject) => {
        waiting.push({ n, resolve });
        settle();
        void exited.then((end) => reject(new Error(`watch exited ${end.code} early: ${end.stderr}`)));
      }),
  };
}

describe("watch", () => {
  it("prints the changes in order, escaped; PATH filters; Ctrl-C exits 130; revocation exits 1 with the vault's message", async () => {
    await root.write("marker.md", "m");
    const since = (await root.versions("marker.md", { limit: 1 })).versions[0]!.id;
    const cap = await root.subdir({ path: "w", rights: ["read"] });
    await root.write("w/a.md", "aa");
    await root.write("outside.md", "not seen");
    await root.write("w/sub/b.md", "b");
    await root.write("w/evil\u202egnp\u2066.md", "x");
    await root.delete("w/a.md");

    const all = watch(["--since", since], cap);
    const filtered = watch(["sub", "--since", since, "--json"], cap);
    const lines = await all.lines(4);
    expect(lines.map((l) => l.replace(/^\d+ /, ""))).toEqual([
      "created a.md (2 B)",
      "created sub/b.md (1 B)",
      "created evil\\u202egnp\\u2066.md (1 B)",
      "deleted a.md (2 B)",
    ]);
    const [line] = await filtered.lines(1);
    expect(JSON.parse(line!)).toMatchObject({ path: "sub/b.md", operation: "created", size: 1 });

    // Live, after the backlog.
    await root.write("w/sub/live.md", "live");
    expect((await all.lines(5))[4]).toMatch(/^\d+ created sub\/live\.md \(4 B\)$/);
    expect(JSON.parse((await filtered.lines(2))[1]!)).toMatchObject({ path: "sub/live.md" });

    all.child.kill("SIGINT");
    expect(await all.exited).toMatchObject({ code: 130, stderr: "" });

    // A reader that goes away (`| head -1`) ends the watch quietly, at its next line.
    const headed = watch(["--since", since], cap);
    await headed.lines(1);
    headed.child.stdout!.destroy();
    await root.write("w/after-reader.md", "z");
    expect(await headed.exited).toMatchObject({ code: 0, stderr: "" });

    await cap.revoke();
    const ended = await filtered.exited;
    expect(ended.code).toBe(1);
    expect(ended.stderr).toBe("capvault: no_such_cap: no such capability\n");
    // JSON lines to the end: each line one document, the refusal the last.
    const documents = ended.stdout
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(documents).toHaveLength(3);
    expect(documents[2]).toMatchObject({ error: { code: "no_such_cap" } });
  });

  it("refuses a cap without read, a path outside the cap and a bad --since before watching", async () => {
    const writeOnly = await root.subdir({ path: "", rights: ["write"] });
    expect(await runInProcess(["watch"], { env: env(writeOnly) })).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/^capvault: forbidden: /),
    });
    expect(await runInProcess(["watch", "../x"], { env: env() })).toMatchObject({
      code: 1,
      stderr: "capvault: path_escapes: path escapes\n",
    });
    expect(await runInProcess(["watch", "--since", "soon"], { env: env() })).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/^capvault: bad_request: /),
    });
  });
});
