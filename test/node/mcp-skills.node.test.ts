/**
 * The MCP Skills extension (SEP-2640) on a cap's /mcp, through the official
 * clients of both eras: the SDK v2's SkillsClient (2026-07-28, which checks
 * every digest, size and frontmatter it is served) and the 1.32 client
 * (2025-11-25), over nested skills, a subdir cap, caps without the rights,
 * and hostile trees.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import {
  Client as ClientV2,
  ProtocolError,
  StreamableHTTPClientTransport as StreamableHTTPClientTransportV2,
} from "@modelcontextprotocol/client";
import { type Skill, SkillsClient } from "@modelcontextprotocol/client/ext/skills";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { FsCap } from "../../clients/typescript/fs-cap.ts";
import { mcpClients, postMcp } from "./mcp-client.ts";
import { type SharedVault, sharedVault } from "./shared-vault.ts";

/** Skills one skills/list page holds at most (SKILLS_PAGE of worker/mcp/skill-entries.ts, which imports workerd-only code). */
const SKILLS_PAGE = 16;

let vault: SharedVault;
let fs: FsCap;
const { connect, keep, closeAll } = mcpClients();

const skillMd = (name: string, extra = "") =>
  `---\nname: ${name}\ndescription: The ${name} skill.\n${extra}---\n\n# ${name}\n`;

/** Path → text: three skills (one nested in another, one in a plain folder), and folders that are no skill. */
const TREE: Record<string, string> = {
  "skills/alpha/SKILL.md": skillMd("alpha", "metadata:\n  owner: tests\n"),
  "skills/alpha/references/GUIDE.md": "# Guide\n",
  "skills/alpha/scripts/run.sh": "echo alpha\n",
  "skills/alpha/inner/gamma/SKILL.md": skillMd("gamma"),
  "skills/alpha/inner/gamma/notes.txt": "gamma's own\n",
  "skills/team/beta/SKILL.md": skillMd("beta"),
  // No frontmatter, a name that is not the folder's, an unclosed block: not skills.
  "skills/plain/SKILL.md": "# Just markdown\n\nname: plain\n",
  "skills/wrong/SKILL.md": skillMd("not-wrong"),
  "skills/open/SKILL.md": "---\nname: open\ndescription: never closed\n",
  "outside.txt": "secret outside the skills",
};

const ALPHA = "skill://skills/alpha/SKILL.md";
const GAMMA = "skill://skills/alpha/inner/gamma/SKILL.md";
const BETA = "skill://skills/team/beta/SKILL.md";

beforeAll(async () => {
  vault = await sharedVault("mcp-skills");
  fs = new FsCap(vault.rootCapUrl);
  await Promise.all(Object.entries(TREE).map(([file, text]) => fs.write(file, text)));
});

afterAll(async () => {
  await closeAll();
});

async function connectV2(capUrl: string): Promise<ClientV2> {
  const client = new ClientV2(
    { name: "capvault-test", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await client.connect(new StreamableHTTPClientTransportV2(new URL(`${capUrl}/mcp`)));
  return keep(client);
}

/** Every skill of the cap, following nextCursor, with the number of pages. */
async function allSkills(skills: SkillsClient): Promise<{ skills: Skill[]; pages: number }> {
  const found: Skill[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await skills.list(cursor === undefined ? {} : { cursor });
    expect(page.invalid).toEqual([]);
    found.push(...page.skills);
    cursor = page.nextCursor;
    pages++;
  } while (cursor !== undefined && pages < 100);
  return { skills: found, pages };
}

const ListSkills = z.object({ skills: z.array(z.record(z.string(), z.unknown())), nextCursor: z.string().optional() });
const GetSkill = z.object({ skill: z.record(z.string(), z.unknown()) });
const AnyResult = z.record(z.string(), z.unknown());

/** A JSON-RPC error's code, from either era's client. */
async function errorCode(call: Promise<unknown>): Promise<number> {
  const error = await call.then(
    () => null,
    (e: unknown) => e,
  );
  if (error instanceof ProtocolError || error instanceof McpError) return error.code;
  // The v2 client reports a 2026-era error answered with an HTTP error status (404 for an unknown method) by its body.
  const code = /"code":(-?\d+)/.exec(String(error))?.[1];
  expect(code, String(error)).toBeDefined();
  return Number(code);
}

describe("skills/list and skills/get, 2026-07-28 (the SDK v2's SkillsClient)", () => {
  it("serves every folder whose SKILL.md has valid frontmatter, nested ones included, each file with its stored SHA-256", async () => {
    const skills = new SkillsClient(await connectV2(fs.url));
    expect(skills.supported).toBe(true);
    expect(skills.directoryRead).toBe(true);
    const { skills: listed } = await allSkills(skills);
    expect(listed.map((s) => s.uri).sort()).toEqual([ALPHA, GAMMA, BETA].sort());
    const alpha = listed.find((s) => s.uri === ALPHA)!;
    expect(alpha.frontmatter).toEqual({ name: "alpha", description: "The alpha skill.", metadata: { owner: "tests" } });
    // The nested skill's files are its own, not alpha's.
    const files = ["SKILL.md", "references/GUIDE.md", "scripts/run.sh"];
    expect(alpha.resources).toEqual(
      await Promise.all(
        files.map(async (file) => {
          const stat = await fs.stat(`skills/alpha/${file}`);
          if (stat.type !== "file") throw new Error("not a file");
          return { uri: `skill://skills/alpha/${file}`, digest: `sha256:${stat.sha256}`, size: stat.size };
        }),
      ),
    );
    // The official client reads each file and checks it against the entry's digest, size and frontmatter.
    for (const file of ["SKILL.md", "references/GUIDE.md"]) {
      const read = await skills.read(alpha, file);
      expect(read.verified, file).toBe(true);
      expect(new TextDecoder().decode(read.bytes)).toBe(TREE[`skills/alpha/${file}`]);
    }
    const got = await skills.get(ALPHA);
    expect(got.skill).toEqual(alpha);
    expect(got).toMatchObject({ ttlMs: 0, cacheScope: "private" });
  });

  it("reads a skill's folders one level at a time, subfolders as inode/directory", async () => {
    const skills = new SkillsClient(await connectV2(fs.url));
    const { resources } = await skills.readDirectory("skill://skills/alpha");
    expect(resources).toEqual([
      {
        uri: "skill://skills/alpha/SKILL.md",
        name: "SKILL.md",
        mimeType: "text/markdown",
        size: TREE[ALPHA.slice(8)]!.length,
      },
      { uri: "skill://skills/alpha/inner", name: "inner", mimeType: "inode/directory" },
      { uri: "skill://skills/alpha/references", name: "references", mimeType: "inode/directory" },
      { uri: "skill://skills/alpha/scripts", name: "scripts", mimeType: "inode/directory" },
    ]);
    await expect(skills.readDirectory(ALPHA)).rejects.toMatchObject({ code: -32602 });
    await expect(skills.readDirectory("skill://skills/none")).rejects.toMatchObject({ code: -32602 });
  });

  it("answers an unknown skill, and every path trick, with -32602 and never another folder's skill", async () => {
    const client = await connectV2(fs.url);
    for (const uri of [
      "skill://skills/plain/SKILL.md",
      "skill://skills/wrong/SKILL.md",
      "skill://skills/open/SKILL.md",
      "skill://skills/none/SKILL.md",
      "skill://%2E%2E/outside/SKILL.md",
      "skill://skills/%2E%2E/%2E%2E/skills/alpha/SKILL.md",
      "skill://skills/alpha/SKILL.md?x=1",
      "skill://skills//alpha/SKILL.md",
      "skill:///skills/alpha/SKILL.md",
      "file:///skills/alpha/SKILL.md",
      "skill://skills/alpha/references/GUIDE.md",
      "skill://skills/alpha",
      "not a uri",
    ]) {
      const error = await client.request({ method: "skills/get", params: { uri } }, GetSkill).then(
        () => null,
        (e: unknown) => e as ProtocolError,
      );
      expect(error, uri).toBeInstanceOf(ProtocolError);
      expect((error as ProtocolError).code, uri).toBe(-32602);
      expect((error as ProtocolError).message, uri).not.toContain("mcp-skills-");
    }
  });
});

describe("skills, 2025-11-25 (the SDK 1.32 client)", () => {
  it("declares the extension and lists and gets the same entries as the 2026 era", async () => {
    const legacy: Client = await connect(fs.url);
    expect(legacy.getServerCapabilities()?.extensions).toEqual({
      "io.modelcontextprotocol/skills": { directoryRead: true },
    });
    const listed = await legacy.request({ method: "skills/list", params: {} }, ListSkills);
    const modern = await allSkills(new SkillsClient(await connectV2(fs.url)));
    expect(listed.skills).toEqual(modern.skills);
    expect(listed).not.toHaveProperty("ttlMs");
    const got = await legacy.request({ method: "skills/get", params: { uri: BETA } }, GetSkill);
    expect(got.skill).toEqual(modern.skills.find((s) => s.uri === BETA));
    expect(
      await errorCode(legacy.request({ method: "skills/get", params: { uri: "skill://x/SKILL.md" } }, GetSkill)),
    ).toBe(-32602);
  });
});

describe("skills and the cap's authority", () => {
  it("a subdir cap sees only the skills below its root, named from that root", async () => {
    const team = await fs.subdir({ path: "skills/team", rights: ["read", "list"] });
    const skills = new SkillsClient(await connectV2(team.url));
    const { skills: listed } = await allSkills(skills);
    expect(listed.map((s) => s.uri)).toEqual(["skill://beta/SKILL.md"]);
    expect((await skills.read(listed[0]!)).verified).toBe(true);
    for (const uri of [ALPHA, "skill://%2E%2E/alpha/SKILL.md", "skill://beta/%2E%2E/%2E%2E/alpha/SKILL.md"]) {
      await expect(skills.get(uri), uri).rejects.toMatchObject({ code: -32602 });
    }
  });

  it("a cap without read or without list is offered no skills: not declared, and each method is Method not found", async () => {
    for (const rights of [["list"], ["read"], ["write"]] as const) {
      const cap = await fs.subdir({ path: "skills", rights: [...rights] });
      const modern = await connectV2(cap.url);
      expect(modern.getServerCapabilities()?.extensions, rights.join()).toBeUndefined();
      for (const method of ["skills/list", "skills/get", "resources/directory/read"]) {
        const params = method === "skills/list" ? {} : { uri: ALPHA };
        expect(await errorCode(modern.request({ method, params }, AnyResult)), `${rights} ${method}`).toBe(-32601);
      }
      const legacy = await connect(cap.url);
      expect(legacy.getServerCapabilities()?.extensions).toBeUndefined();
      expect(await errorCode(legacy.request({ method: "skills/list", params: {} }, ListSkills))).toBe(-32601);
    }
  });
});

describe("the stateless era's version check", () => {
  it("answers a 2026-era request naming an unknown version with UnsupportedProtocolVersion: the versions served, its own id", async () => {
    const discover = {
      jsonrpc: "2.0",
      id: 301,
      method: "server/discover",
      params: {
        _meta: {
          "io.modelcontextprotocol/protocolVersion": "v999.0.0",
          "io.modelcontextprotocol/clientCapabilities": {},
        },
      },
    };
    const response = await postMcp(fs.url, discover, { "mcp-protocol-version": "v999.0.0" });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      jsonrpc: "2.0",
      id: 301,
      error: {
        code: -32022,
        message: "Unsupported protocol version: v999.0.0",
        data: { supported: ["2026-07-28"], requested: "v999.0.0" },
      },
    });
  });
});

describe("skills over a huge tree stay bounded", () => {
  const SKILLS = SKILLS_PAGE + 4;
  let cap: FsCap;
  beforeAll(async () => {
    // Thousands of folders and files written straight into the disk root, so setting up costs no requests.
    const disk = new FsCap(vault.diskCapUrl);
    const base = path.join(vault.diskRoot, "huge");
    for (let i = 0; i < 1500; i++) {
      const dir = path.join(base, `aa-${String(i).padStart(4, "0")}`);
      await mkdir(dir, { recursive: true });
      await writeFile(path.join(dir, "f.txt"), "x");
    }
    // A skill folder past the extension's limit of 512 files: not served.
    for (let i = 0; i < 520; i++) {
      await mkdir(path.join(base, "bulky", `d${i}`), { recursive: true });
      await writeFile(path.join(base, "bulky", `d${i}`, "f.txt"), "x");
    }
    await disk.write("huge/bulky/SKILL.md", skillMd("bulky"));
    for (let i = 0; i < SKILLS; i++) {
      const name = `s-${String(i).padStart(2, "0")}`;
      await disk.write(`huge/zz/${name}/SKILL.md`, skillMd(name));
    }
    cap = await disk.subdir({ path: "huge", rights: ["read", "list"] });
  });

  it("pages skills/list by scanned entries and by skills per page, and finds each skill exactly once", async () => {
    // Raw pages: the SkillsClient follows every cursor itself when given none.
    const client = await connectV2(cap.url);
    const pages: number[] = [];
    const found: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.request(
        { method: "skills/list", params: cursor === undefined ? {} : { cursor } },
        ListSkills,
      );
      pages.push(page.skills.length);
      found.push(...page.skills.map((s) => String(s.uri)));
      cursor = page.nextCursor;
    } while (cursor !== undefined && pages.length < 50);
    expect(found).toEqual(
      Array.from({ length: SKILLS }, (_, i) => `skill://zz/s-${String(i).padStart(2, "0")}/SKILL.md`),
    );
    expect(Math.max(...pages)).toBeLessThanOrEqual(SKILLS_PAGE);
    // 2,021 files before the skills: pages that scanned only folders of no skill come back empty, with a cursor.
    expect(pages.slice(0, 2)).toEqual([0, 0]);
    expect(cursor).toBeUndefined();
  });

  it("refuses a batch of listings past the request's budget instead of doing their work", async () => {
    const batch = Array.from({ length: 20 }, (_, id) => ({ jsonrpc: "2.0", id, method: "skills/list", params: {} }));
    const response = await postMcp(cap.url, batch, { "mcp-protocol-version": "2025-11-25" });
    expect(response.status).toBe(200);
    const answers = (await response.json()) as {
      id: number;
      result?: unknown;
      error?: { code: number; message: string };
    }[];
    const refused = answers.filter((a) => a.error);
    expect(answers.length - refused.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    for (const a of refused) {
      expect(a.error!.code).toBe(-32600);
      expect(a.error!.message).toMatch(/this request has used its budget/);
    }
  });
});
