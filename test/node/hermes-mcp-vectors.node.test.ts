/**
 * Hermes' own test vectors (clients/python/tests/hermes_vectors/, copied as
 * data from NousResearch/hermes-agent at the commits each file names) run
 * through the vault's MCP tools with the official MCP client: the no-code
 * route, where Hermes runs with `agent.disabled_toolsets: [file]` and reaches
 * files only through the cap's MCP endpoint. Each vector's call is the MCP
 * call a model would make for it; an outcome other than Hermes' is allowed
 * only where this file flags it, with the reason. Both backends; vectors that
 * need links in the host folder run on disk only. Also the SDK's and MCP's
 * whole-folder and line tools on the same vault.
 */
import { randomUUID } from "node:crypto";
import { mkdir, readFile, symlink } from "node:fs/promises";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isCapError } from "../../clients/typescript/cap-error.ts";
import { FsCap } from "../../clients/typescript/fs-cap.ts";
import { mcpClients, type ToolText } from "./mcp-client.ts";
import { type SharedVault, sharedVault } from "./shared-vault.ts";

const VECTORS = path.join(import.meta.dirname, "../../clients/python/tests/hermes_vectors");
const vectors = async (name: string) => JSON.parse(await readFile(path.join(VECTORS, `${name}.json`), "utf8"));
const PATH_CODES = new Set(["path_escapes", "absolute_path", "outside_root", "invalid_path"]);

/**
 * Where the MCP route answers otherwise than Hermes (or than the plugin, for
 * path vectors), and why. The test fails on any other difference, and on a
 * flag that no longer differs.
 */
const MCP_DIVERGES: Record<string, string> = {
  // A leading "/" names the cap's root on MCP (the official filesystem server's tools take absolute paths).
  "path_security/test_validate_absolute_outside_root_returns_error":
    "MCP takes one leading '/' as the cap's root, so '/etc/passwd' is the cap's etc/passwd (not found): refused as an absolute path by HTTP and the plugin, still nothing outside the cap",
  "skill_view_traversal/test_absolute_skill_name_blocked":
    "the same leading '/': the host path names a file inside the cap, which does not exist (not_found); the secret is never read",
  // The file layer has no skill rules: skill_manage's checks stay Hermes' own tool on the no-code route.
  "skill_manager/TestCreateSkill.test_create_duplicate_blocked":
    "write_file replaces a file; 'already exists' is skill_manage's rule, not the file layer's",
  "skill_manager/TestCreateSkill.test_create_invalid_name":
    "skill names are skill_manage's rule; the vault takes any valid path",
  "skill_manager/TestCreateSkill.test_create_invalid_content":
    "frontmatter is skill_manage's rule; the vault stores any text",
  "skill_manager/TestCreateSkill.test_create_rejects_absolute_category":
    "a leading '/' is the cap's root on MCP: the skill lands in tmp/escape/ inside the cap, not on the host",
  "skill_manager/TestEditSkill.test_edit_nonexistent_skill":
    "write_file creates the file; 'not found' is skill_manage's rule",
  "skill_manager/TestEditSkill.test_edit_invalid_content_rejected":
    "frontmatter is skill_manage's rule; the vault stores any text",
  "skill_manager/TestPatchSkill.test_patch_replace_all":
    "edit_file replaces one exact, unique occurrence per edit (the official server's rule); it has no replace_all",
  "skill_manager/TestValidateFilePath.test_disallowed_subdirectory (through write_file)":
    "which subfolders a skill may hold is skill_manage's rule; the vault takes any path inside the cap",
  "skill_manager/TestValidateFilePath.test_directory_only_rejected (through write_file)":
    "write_file makes a file named 'references' (no folder of that name exists yet); the subfolder rule is skill_manage's",
  "skill_manager/TestValidateFilePath.test_root_level_file_rejected (through write_file)":
    "which files a skill may hold is skill_manage's rule; the vault takes any path inside the cap",
};

/** The vector families the MCP route does not reach at all, and why. */
const NOT_ON_MCP: Record<string, string> = {
  file_operations:
    "Hermes' file-tool result shapes (N|line rows, total_lines, bytes_written, dirs_created, is_binary, PatchResult, SearchResult): with disabled_toolsets: [file] those tools are gone and the model sees the MCP server's own tools and shapes; only the plugin route keeps Hermes' shapes",
  skills_tool:
    "skills_list and skill_view are Hermes' skills toolset, which disabled_toolsets: [file] leaves in place, reading ~/.hermes/skills with Hermes' own authority; skill files reached through MCP are the skill_view_traversal vectors above",
  memory:
    "Hermes' memory tool is not in the `file` toolset: with disabled_toolsets: [file] it still writes ~/.hermes/memories with Hermes' own authority; only the plugin route (or disabling the memory toolset) puts memory on a cap",
};

let vault: SharedVault;
const mcp = mcpClients();
const outcomes: string[] = [];

beforeAll(async () => {
  vault = await sharedVault("hermes-mcp-vectors");
}, 120_000);

afterAll(async () => {
  await mcp.closeAll();
  console.log(outcomes.join("\n"));
});

const exists = (cap: FsCap, p: string) =>
  cap.stat(p).then(
    () => true,
    () => false,
  );

/** The code of an MCP tool error (`code: message`), or "ok". */
const codeOf = (answer: ToolText) => (answer.isError ? (answer.text.split(":")[0] ?? "error") : "ok");

describe.each(["r2", "disk"] as const)("%s backend", (backend) => {
  let root: FsCap;
  /** A fresh folder: its cap, and (on disk) its host folder, for links and files beside a cap. */
  const area = async (tag: string) => {
    const name = `${tag}-${randomUUID().slice(0, 8)}`;
    const cap = await root.subdir({ path: name });
    return { cap, host: backend === "disk" ? path.join(vault.diskRoot, name) : null };
  };
  const checked = new Map<string, boolean>();
  const judge = (key: string, same: boolean, detail: string) => {
    const flagged = key in MCP_DIVERGES;
    checked.set(key, same);
    outcomes.push(`${backend} ${same ? "same" : "DIVERGES"} ${key}${flagged && !same ? `: ${MCP_DIVERGES[key]}` : ""}`);
    expect(same || flagged, `${key}: ${detail}`).toBe(true);
    expect(!same || !flagged, `${key} is flagged but answers as Hermes: ${detail}`).toBe(true);
  };

  beforeAll(async () => {
    await mkdir(vault.diskRoot, { recursive: true });
    root = new FsCap(backend === "r2" ? vault.rootCapUrl : vault.diskCapUrl);
  });

  it("path_security: every path is judged by the vault through get_file_info", async () => {
    const data = await vectors("path_security");
    const { cap, host } = await area("ps");
    await cap.write("root/real.txt", "ok");
    await cap.makeFolder("root/b");
    await cap.write("outside.txt", "TOP-SECRET-BYTES");
    if (host) {
      await symlink(path.join(host, "outside.txt"), path.join(host, "root/link"));
      await symlink(path.join(host, "root/real.txt"), path.join(host, "root/inlink"));
    }
    const client = await mcp.connect((await cap.subdir({ path: "root" })).url);
    for (const v of data.vectors as { hermes_test: string; path: string; cap: string }[]) {
      if (!host && (v.path === "link" || v.path === "inlink")) continue; // R2 has no links
      const answer = await mcp.call(client, "get_file_info", { path: v.path });
      const code = codeOf(answer);
      const got = PATH_CODES.has(code) ? code : "ok";
      expect(answer.text).not.toContain("TOP-SECRET");
      judge(`path_security/${v.hermes_test}`, got === v.cap, `MCP ${got}, the vault's HTTP answer ${v.cap}`);
    }
  });

  it("skill_view_traversal: read_text_file on the skills cap", async () => {
    const data = await vectors("skill_view_traversal");
    const { cap, host } = await area("sv");
    await cap.write("root/skills/test-skill/SKILL.md", "# Test Skill\nA test skill.");
    await cap.write("root/skills/test-skill/references/api.md", "API docs here");
    await cap.write("root/.env", "SECRET_API_KEY=sk-do-not-leak");
    await cap.write("root/outside-skill/SKILL.md", "# outside");
    await cap.write("root/outside-skill/.env", "ESCAPED_SECRET=do-not-leak");
    await cap.write("root/secret.txt", "TOP SECRET DATA");
    if (host) await symlink(path.join(host, "root/secret.txt"), path.join(host, "root/skills/test-skill/evil-link"));
    const client = await mcp.connect((await cap.subdir({ path: "root/skills" })).url);
    type V = { hermes_test: string; name: string; file_path?: string; success: boolean; code?: string };
    for (const v of data.vectors as (V & { never?: string[]; content_has?: string })[]) {
      if (!host && v.file_path === "evil-link") continue; // R2 has no links
      const name = v.name.replace("{root}", host ?? "/vault/root");
      const answer = await mcp.call(client, "read_text_file", { path: `${name}/${v.file_path ?? "SKILL.md"}` });
      for (const secret of v.never ?? []) expect(answer.text).not.toContain(secret);
      if (v.content_has && !answer.isError) expect(answer.text).toContain(v.content_has);
      const same = v.success ? !answer.isError : answer.isError && codeOf(answer) === v.code;
      judge(
        `skill_view_traversal/${v.hermes_test}`,
        same,
        `MCP ${codeOf(answer)}, Hermes ${v.success ? "ok" : v.code}`,
      );
    }
  });

  it("skill_manager: skill_manage's calls as write_file, edit_file, delete_file and delete_directory", async () => {
    const data = await vectors("skill_manager");
    const fill = (text: string) => text.replace(/\{(skill2|skill|words)\}/g, (_, k: string) => data.contents[k]);
    type Call = Record<string, string | boolean | undefined> & { action: string; name: string };
    /** The skill's folder: its category, if any, then its name (a category link points at the real one). */
    const folderOf = (call: Call, linked: boolean) =>
      linked ? `real_category/${call.name}` : call.category ? `${call.category}/${call.name}` : call.name;
    const send = (client: Client, call: Call, linked: boolean): Promise<ToolText> => {
      const folder = folderOf(call, linked);
      const file = `${folder}/${(call.file_path as string | undefined) ?? "SKILL.md"}`;
      switch (call.action) {
        case "create":
        case "edit":
          return mcp.call(client, "write_file", { path: `${folder}/SKILL.md`, content: fill(String(call.content)) });
        case "patch":
          return mcp.call(client, "edit_file", {
            path: file,
            edits: [{ oldText: call.old_string, newText: call.new_string }],
          });
        case "delete":
          return mcp.call(client, "delete_directory", { path: folder, recursive: true });
        case "write_file":
          return mcp.call(client, "write_file", { path: file, content: String(call.file_content) });
        default:
          return mcp.call(client, "delete_file", { path: file });
      }
    };
    for (const v of data.vectors) {
      const links: [string, string][] = v.symlink ? [v.symlink] : [];
      if (backend !== "disk" && (links.length > 0 || v.host_skill_outside)) continue; // R2 has no links
      const { cap, host: dir } = await area("sm");
      const skills = await cap.subdir({ path: "skills" });
      const client = await mcp.connect(skills.url);
      for (const step of v.setup ?? []) expect((await send(client, step, false)).isError).toBe(false);
      if (v.outside_unchanged) await cap.write(v.outside_unchanged[0], fill(v.outside_unchanged[1]));
      if (v.host_skill_outside) await cap.write(v.host_skill_outside[0], fill(v.host_skill_outside[1]));
      for (const [link, target] of links) {
        await mkdir(path.dirname(path.join(dir!, "skills", link)), { recursive: true });
        await symlink(path.join(dir!, target), path.join(dir!, "skills", link));
      }
      const answer = await send(client, v.call, Boolean(v.host_skill_outside));
      if (v.outside_unchanged) expect(await cap.readText(v.outside_unchanged[0])).toBe(fill(v.outside_unchanged[1]));
      let same = answer.isError === !v.success && (v.code === undefined || codeOf(answer) === v.code);
      if (same && v.success) {
        for (const p of v.exists ?? []) same &&= await exists(skills, p);
        if (v.file_has) same &&= ((await skills.readText(v.file_has[0])) ?? "").includes(v.file_has[1]);
      }
      for (const p of v.absent ?? []) expect(await exists(cap, p.replace(/^\.\.\//, ""))).toBe(false);
      judge(`skill_manager/${v.hermes_test}`, same, `MCP ${answer.text.slice(0, 120)}; Hermes success ${v.success}`);
    }
  });

  it("credential_files: whether a declared file is reachable, through get_file_info on a cap on the home folder", async () => {
    const data = await vectors("credential_files");
    const { cap, host } = await area("cf");
    for (const name of ["token.json", "oauth.json", "creds/oauth.json", "google_token.json", ".env", "auth.json"])
      await cap.write(`home/${name}`, `SECRET-${name}`);
    for (const name of [
      ".anthropic_oauth.json",
      "webhook_subscriptions.json",
      "cache/bws_cache.json",
      "mcp-tokens/srv.json",
    ])
      await cap.write(`home/${name}`, `SECRET-${name}`);
    for (const name of ["sensitive.json", "secret.json", ".ssh/id_rsa", "absolute.json", "abs.json"])
      await cap.write(name, "OUTSIDE-BYTES");
    if (host) await symlink(path.join(host, "sensitive.json"), path.join(host, "home/evil_link.json"));
    const client = await mcp.connect((await cap.subdir({ path: "home" })).url);
    type V = { hermes_test: string; path: string; hermes: boolean; diverges?: string; disk_only?: boolean };
    for (const v of data.vectors as V[]) {
      if (v.disk_only && !host) continue;
      const answer = await mcp.call(client, "get_file_info", { path: v.path.replace("{outside}", host ?? "/vault") });
      expect(answer.text).not.toContain("OUTSIDE-BYTES");
      // A leading "/" is the cap's root on MCP, so an absolute host path is a missing file here: not reachable either way.
      const same = !answer.isError === v.hermes;
      outcomes.push(
        `${backend} ${same ? "same" : "DIVERGES"} credential_files/${v.hermes_test}${same ? "" : `: ${v.diverges}`}`,
      );
      expect(same, `${v.hermes_test}: MCP ${codeOf(answer)}, Hermes ${v.hermes}`).toBe(!v.diverges);
    }
  });

  it.each([
    ["memory", 22],
    ["file_operations", 40],
    ["skills_tool", 26],
  ])("%s: not on the MCP route, flagged whole", async (family, count) => {
    const data = await vectors(family);
    outcomes.push(`${backend} NOT ON MCP ${family} (${data.vectors.length} vectors): ${NOT_ON_MCP[family]}`);
    expect(data.vectors.length).toBe(count);
  });

  it("every flag is used: each flagged vector ran and diverged on this backend", () => {
    for (const key of Object.keys(MCP_DIVERGES)) {
      if (!checked.has(key)) continue; // a links-only vector on R2
      expect(checked.get(key), key).toBe(false);
    }
  });

  it("SDK and MCP: a folder deleted and moved whole, lines read by window", async () => {
    const { cap } = await area("tools");
    for (const name of ["a/x.txt", "a/s/y.txt"]) await cap.write(name, `${name}\n`);
    await cap.move("a", "b");
    expect((await cap.listPage("", { depth: 0 })).entries.map((e) => e.name)).toEqual(["b/s/y.txt", "b/x.txt"]);
    await cap.write("t.txt", "one\ntwo\nthree\n");
    expect(await cap.readLines("t.txt", { offset: 2, limit: 1 })).toEqual({
      lines: ["two"],
      offset: 2,
      totalLines: 3,
      nextOffset: 3,
      size: 14,
    });
    const client = await mcp.connect(cap.url);
    expect(await mcp.ok(client, "move_file", { source: "b", destination: "c" })).toBe(
      "Successfully moved b to c (2 files, 2 folders)",
    );
    const lines = JSON.parse(await mcp.ok(client, "read_text_lines", { path: "/t.txt", offset: 3 }));
    expect(lines).toMatchObject({ lines: ["three"], totalLines: 3, nextOffset: null });
    expect(await mcp.ok(client, "delete_directory", { path: "/c", recursive: true })).toBe(
      "Successfully deleted directory /c (2 files, 2 folders)",
    );
    expect((await mcp.call(client, "delete_directory", { path: "t.txt" })).text).toMatch(/^conflict: /);
    expect(await cap.removeTree("nowhere").catch((e: unknown) => isCapError(e) && e.code)).toBe("not_found");
    for (let i = 0; i < 21; i++) await cap.write(`big/f${i}`, "x");
    expect((await mcp.call(client, "delete_directory", { path: "big", recursive: true })).text).toMatch(/^too_large: /);
    expect(await cap.removeTree("big").catch((e: unknown) => isCapError(e) && e.code)).toBe("too_large");
    const readOnly = await mcp.toolNames(await mcp.connect((await cap.subdir({ path: "", rights: ["read"] })).url));
    expect(readOnly).toContain("read_text_lines");
    expect(readOnly).not.toContain("delete_directory");
  });
});
