/**
 * The memory tool on the disk backend, where symlinks exist: paths through a
 * link that leads outside the cap's folder are refused with `outside_root`
 * by every command, and nothing outside is read, created or changed. Then
 * the HTTP route's own contract: malformed bodies and dead tokens.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AdminClient } from "../../clients/typescript/admin-client.ts";
import { FsCap } from "../../clients/typescript/fs-cap.ts";
import { createMemoryTool } from "../../clients/typescript/memory-tool.ts";
import type { MemoryResult } from "../../memory-tool/memory-handler.ts";
import { type SharedVault, sharedVault } from "./shared-vault.ts";

const SECRET = "top secret outside the vault\n";
let vault: SharedVault;
let outside: string;

/** Names and contents of everything in the outside folder. */
async function outsideState(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of await readdir(outside)) out[name] = await readFile(path.join(outside, name), "utf8");
  return out;
}

beforeAll(async () => {
  vault = await sharedVault("memory-route");
  outside = await mkdtemp(path.join(os.tmpdir(), "capvault-outside-"));
  await writeFile(path.join(outside, "secret.txt"), SECRET);
  const root = vault.diskRoot;
  await mkdir(path.join(root, "notes"), { recursive: true });
  await writeFile(path.join(root, "inside.md"), "inside\n");
  await writeFile(path.join(root, "notes", "n.md"), "note\n");
  await symlink(outside, path.join(root, "link-dir"));
  await symlink(path.join(outside, "secret.txt"), path.join(root, "link-file.md"));
  await symlink("../../" + path.basename(outside), path.join(root, "notes", "escape"));
  await symlink("inside.md", path.join(root, "ok-link.md"));
});

afterAll(async () => {
  if (outside) await rm(outside, { recursive: true, force: true });
});

const post = (capUrl: string, body: string, headers: Record<string, string> = { "content-type": "application/json" }) =>
  fetch(`${capUrl}/memory`, { method: "POST", headers, body });

const ways: [string, () => (input: unknown) => Promise<MemoryResult>][] = [
  ["SDK", () => createMemoryTool(vault.diskCapUrl).call],
  [
    "HTTP route",
    () => async (input) => {
      const response = await post(vault.diskCapUrl, JSON.stringify(input));
      const code = response.headers.get("capvault-error-code");
      const text = await response.text();
      return code === null ? { text, isError: false, code: null } : ({ text, isError: true, code } as MemoryResult);
    },
  ],
];

describe.each(ways)("symlinks on the disk backend, through the %s", (_way, connect) => {
  it.each([
    { command: "view", path: "/memories/link-file.md" },
    { command: "view", path: "/memories/link-dir" },
    { command: "view", path: "/memories/link-dir/secret.txt" },
    { command: "view", path: "/memories/notes/escape/secret.txt" },
    { command: "create", path: "/memories/link-dir/planted.md", file_text: "planted" },
    { command: "create", path: "/memories/notes/escape/planted.md", file_text: "planted" },
    { command: "create", path: "/memories/link-file.md", file_text: "overwritten" },
    { command: "str_replace", path: "/memories/link-file.md", old_str: "secret", new_str: "public" },
    { command: "str_replace", path: "/memories/link-dir/secret.txt", old_str: "secret", new_str: "public" },
    { command: "insert", path: "/memories/link-file.md", insert_line: 0, insert_text: "pwned" },
    { command: "delete", path: "/memories/link-file.md" },
    { command: "delete", path: "/memories/link-dir" },
    { command: "delete", path: "/memories/link-dir/secret.txt" },
    { command: "rename", old_path: "/memories/link-file.md", new_path: "/memories/stolen.md" },
    { command: "rename", old_path: "/memories/link-dir/secret.txt", new_path: "/memories/stolen.md" },
    { command: "rename", old_path: "/memories/inside.md", new_path: "/memories/link-dir/exfiltrated.md" },
  ])("$command through a link leading outside is refused with outside_root", async (input) => {
    const before = await outsideState();
    const result = await connect()(input);
    expect(result.isError, result.text).toBe(true);
    expect(result.code).toBe("outside_root");
    expect(result.text).toMatch(/^Error: outside_root: /);
    expect(result.text).not.toContain(outside);
    expect(result.text).not.toContain(vault.diskRoot);
    expect(result.text).not.toContain(SECRET.trim());
    expect(await outsideState()).toEqual(before);
    expect(await readFile(path.join(vault.diskRoot, "inside.md"), "utf8")).toBe("inside\n");
    await expect(readFile(path.join(vault.diskRoot, "stolen.md"))).rejects.toMatchObject({ code: "ENOENT" });
  });

  it("a view of /memories shows what is inside, links leading outside not at all", async () => {
    const text = (await connect()({ command: "view", path: "/memories" })).text;
    expect(text.split("\n")).toEqual([
      "Here're the files and directories up to 2 levels deep in /memories, excluding hidden items and node_modules:",
      "19B\t/memories",
      "7B\t/memories/inside.md",
      "5B\t/memories/notes/",
      "5B\t/memories/notes/n.md",
      "7B\t/memories/ok-link.md",
    ]);
  });

  it("a link that stays inside is followed", async () => {
    expect((await connect()({ command: "view", path: "/memories/ok-link.md" })).text).toBe(
      "Here's the content of /memories/ok-link.md with line numbers:\n     1\tinside\n     2\t",
    );
  });
});

describe("POST /object/<token>/memory", () => {
  it("answers text/plain with the result string, and the error code in a header", async () => {
    const ok = await post(vault.rootCapUrl, JSON.stringify({ command: "view", path: "/memories" }));
    expect(ok.status).toBe(200);
    expect(ok.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(ok.headers.get("capvault-error-code")).toBeNull();
    expect(await ok.text()).toMatch(
      /^Here're the files and directories up to 2 levels deep in \/memories, excluding hidden items and node_modules:\n/,
    );

    const refused = await post(vault.rootCapUrl, JSON.stringify({ command: "view", path: "/memories/.." }));
    expect(refused.status).toBe(200);
    expect(refused.headers.get("capvault-error-code")).toBe("path_escapes");
    expect(await refused.text()).toBe("Error: path_escapes: path escapes (/memories/..)");
  });

  it.each([
    ["malformed JSON", "{nope", "bad_request"],
    ["a JSON array", "[]", "bad_request"],
    ["a JSON string", '"view"', "bad_request"],
    ["an empty body", "", "bad_request"],
  ])("refuses %s with a 400 JSON error", async (_what, body, code) => {
    const response = await post(vault.rootCapUrl, body);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe(code);
  });

  it("refuses a body over the limit with 413 before parsing it", async () => {
    const response = await post(
      vault.rootCapUrl,
      JSON.stringify({ command: "create", path: "/memories/big.md", file_text: "x".repeat(5 * 1024 * 1024) }),
    );
    expect(response.status).toBe(413);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("too_large");
    await expect(new FsCap(vault.rootCapUrl).stat("big.md")).rejects.toMatchObject({ code: "not_found" });
  });

  it("answers unknown, malformed and revoked tokens with the same 404 as every other route", async () => {
    const unknown = `${vault.url}/object/${"a".repeat(48)}`;
    const reference = await fetch(unknown);
    const referenceBody = await reference.text();
    expect(reference.status).toBe(404);

    const admin = new AdminClient(vault.url, vault.adminToken);
    const revoked = await admin.mintRoot({ backend: "r2", prefix: "memory-revoked/", label: "revoked" });
    await revoked.revoke();
    for (const capUrl of [unknown, `${vault.url}/object/not-a-token`, revoked.url]) {
      for (const body of [JSON.stringify({ command: "view", path: "/memories" }), "{nope"]) {
        const response = await post(capUrl, body);
        expect(response.status).toBe(404);
        expect(await response.text()).toBe(referenceBody);
      }
    }
  });
});
