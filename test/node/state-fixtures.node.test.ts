/**
 * Old state opened by today's code (issue 33): each fixture in
 * test/fixtures/state/<format>/<commit>/ was written by that commit's own
 * launcher (test/fixtures/state/build.ts). Today's launcher starts on a copy of
 * it, and on both backends what the old vault held must still hold: files read,
 * list and take new writes, their history goes on, rights, revocations, expiry,
 * holder bindings and OAuth grants are as they were; and again after a restart
 * (a migration on wake ran once, and its result is what the next wake opens).
 *
 * Format 0 (unsigned 32-character tokens) is only checked to start and to answer
 * its tokens with a 4xx, never a 5xx: what those caps do is the legacy work's.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProofSigner } from "../../shared/holder-proof-sign.ts";
import { FORMAT_FILE_NAME, parseFormatStamp, STATE_FORMAT } from "../../shared/state-format.ts";
import {
  type FixtureBackend,
  type FixtureCap,
  type FixtureGrant,
  type FixtureManifest,
  holderSigner,
  proofHeader,
  tokenEndpointProof,
} from "../fixtures/state/fixture-manifest.ts";
import { mcpClients, postMcp, toolCall } from "./mcp-client.ts";
import { startTestVault, type TestVault } from "./test-vault.ts";

const ROOT = path.resolve(import.meta.dirname, "../fixtures/state");

interface Fixture {
  /** `<format>/<short commit>`, its folder below test/fixtures/state. */
  name: string;
  dir: string;
  manifest: FixtureManifest;
}

/** Every fixture, or only those whose commit STATE_FIXTURES names (comma-separated short commits), to replay some. */
function fixtures(): Fixture[] {
  const only = process.env.STATE_FIXTURES?.split(",").filter(Boolean);
  const found: Fixture[] = [];
  for (const format of readdirSync(ROOT)
    .filter((n) => /^\d+$/.test(n))
    .sort()) {
    for (const commit of readdirSync(path.join(ROOT, format)).sort()) {
      if (only && !only.includes(commit)) continue;
      const dir = path.join(ROOT, format, commit);
      const manifest = JSON.parse(readFileSync(path.join(dir, "manifest.json"), "utf8")) as FixtureManifest;
      found.push({ name: `${format}/${commit}`, dir, manifest });
    }
  }
  return found;
}

const all = fixtures();
const q = encodeURIComponent;

async function answer(url: string, init: RequestInit = {}) {
  const response = await fetch(url, init);
  const text = await response.text();
  let code: string | undefined;
  try {
    code = (JSON.parse(text) as { error?: { code?: string } }).error?.code;
  } catch {}
  return { status: response.status, text, code, headers: response.headers };
}

/** A token that was never minted, of the same length and kind (its last character changed). */
function forged(token: string): string {
  const last = token.at(-1)!;
  return token.slice(0, -1) + (last === "a" ? "b" : "a");
}

/** A format-0 vault: it must start and answer every old token with a 4xx. */
function formatZeroRun({ name, dir, manifest }: Fixture) {
  let vault: TestVault;
  const tokens = () => {
    const list: string[] = Object.values(manifest.launcherRoots).map((url) => url.split("/object/")[1]!);
    for (const b of Object.values(manifest.backends))
      list.push(b.root.token, b.readOnly.token, b.rwChild.token, b.grandchild.token, b.revoked.child.token);
    return list;
  };
  return {
    name,
    async start() {
      vault = await startTestVault({ from: { state: path.join(dir, "state"), diskRoot: path.join(dir, "disk") } });
    },
    restart: () => vault.restart(),
    stop: async () => {
      await vault?.stop();
    },
    async neverServerErrors() {
      expectDiskStamped(vault);
      const admin = await answer(`${vault.url}/admin/roots`, {
        headers: { authorization: `Bearer ${vault.adminToken}` },
      });
      expect(admin.status, admin.text).toBeLessThan(500);
      for (const token of tokens()) {
        expect(token).toHaveLength(32);
        const cap = `${vault.url}/object/${token}`;
        const probes = [
          await answer(cap),
          await answer(`${cap}/file?path=notes/today.md`),
          await answer(`${cap}/list?path=`),
          await answer(`${cap}/file?path=new.txt`, { method: "PUT", body: "x" }),
          await answer(`${cap}/mcp`, {
            method: "POST",
            headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
            body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
          }),
        ];
        for (const probe of probes) {
          expect(probe.status, probe.text).toBeGreaterThanOrEqual(400);
          expect(probe.status, probe.text).toBeLessThan(500);
        }
      }
    },
  };
}

/** A format-1 (or later) vault: everything the old vault held must still hold. */
function formatOneRun({ name: fixtureName, dir, manifest }: Fixture) {
  let vault: TestVault;
  let signer: ProofSigner | null = null;
  const mcp = mcpClients();
  /** What each backend's files hold now (the fixture's, then this test's writes), by path below the root. */
  const contents: Record<string, Map<string, string>> = {};
  /** The version ids of notes/today.md after this test's write, per backend. */
  const history: Record<string, string[]> = {};
  /** Caps this test revoked or saw die, per backend: dead after the restart too. */
  const killed: Record<string, FixtureCap[]> = {};
  /** Bytes this test wrote through each backend's root subtree (every write keeps the old bytes as a version). */
  const added: Record<string, number> = { r2: 0, disk: 0 };
  const wrote = (name: string, file: string, content: string) => {
    contents[name]!.set(file, content);
    added[name]! += Buffer.byteLength(content);
  };
  /** Each grant's current refresh token (the fixture's, then each rotation's). */
  const refreshTokens = new Map<FixtureGrant, string>();
  for (const grant of [manifest.oauth, manifest.oauthDpop]) if (grant) refreshTokens.set(grant, grant.refreshToken);

  for (const [name, b] of Object.entries(manifest.backends)) {
    contents[name] = new Map(b.files.map((f) => [f.path, f.content]));
    killed[name] = [b.revoked.child, b.revoked.grandchild, b.expiring];
  }

  const url = (cap: FixtureCap) => `${vault.url}/object/${cap.token}`;
  const read = (cap: FixtureCap, file: string, headers: Record<string, string> = {}) =>
    answer(`${url(cap)}/file?path=${q(file)}`, { headers });
  const write = (cap: FixtureCap, file: string, body: string, headers: Record<string, string> = {}) =>
    answer(`${url(cap)}/file?path=${q(file)}`, {
      method: "PUT",
      body,
      headers: { "content-type": "text/plain", ...headers },
    });
  const mint = async (parent: FixtureCap, body: Record<string, unknown>): Promise<FixtureCap> => {
    const minted = await answer(`${url(parent)}/subdir`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(minted.status, minted.text).toBe(201);
    const m = JSON.parse(minted.text) as { token: string; id: string; rights: string[] };
    return { token: m.token, id: m.id, path: String(body.path), rights: m.rights };
  };
  const versionIds = async (b: FixtureBackend, file: string) => {
    const listed = await answer(`${url(b.root)}/versions?path=${q(file)}&limit=100`);
    expect(listed.status, listed.text).toBe(200);
    return (JSON.parse(listed.text) as { versions: { id: string }[] }).versions.map((v) => v.id);
  };
  /** A dead cap answers exactly as a token never minted does. */
  const expectDead = async (cap: FixtureCap) => {
    const dead = await answer(url(cap));
    const unknown = await answer(`${vault.url}/object/${forged(cap.token)}`);
    expect(dead.code, dead.text).toBe("no_such_cap");
    expect([dead.status, dead.text]).toEqual([unknown.status, unknown.text]);
    expect((await read(cap, "today.md")).code).toBe("no_such_cap");
  };
  const mcpRead = async (capUrl: string, file: string, headers: Record<string, string> = {}) => {
    const client: Client = await mcp.connect(capUrl, headers);
    return mcp.ok(client, "read_file", { path: file });
  };

  /** Every file the fixture and this test wrote reads back through the root, and a recursive listing names them all. */
  const filesHold = async (name: string, b: FixtureBackend) => {
    for (const [file, content] of contents[name]!) {
      const got = await read(b.root, file);
      expect(got.status, `${name} ${file}: ${got.text}`).toBe(200);
      expect(got.text).toBe(content);
      // The type the old vault stored, while the file is the old vault's (disk: see the known gap below).
      const old = b.files.find((f) => f.path === file && f.content === content);
      if (old && name === "r2") expect(got.headers.get("content-type"), `${name} ${file}`).toBe(old.contentType);
    }
    const listed = await answer(`${url(b.root)}/list?path=&depth=0`);
    expect(listed.status, listed.text).toBe(200);
    const names = (JSON.parse(listed.text) as { entries: { name: string; type: string }[] }).entries
      .filter((e) => e.type === "file")
      .map((e) => e.name)
      .sort();
    expect(names).toEqual([...contents[name]!.keys()].sort());
    const top = await answer(`${url(b.root)}/list?path=`);
    const folders = (JSON.parse(top.text) as { entries: { name: string; type: string }[] }).entries
      .filter((e) => e.type === "dir")
      .map((e) => e.name);
    for (const folder of b.folders.filter((f) => !f.includes("/")))
      expect(folders, `${name}: the folder ${folder}`).toContain(folder);
  };

  /** Rights, bindings and deaths as the old vault left them (and as this test changed them). */
  const capsHold = async (name: string, b: FixtureBackend) => {
    const ro = await read(b.readOnly, "readme.md");
    expect([ro.status, ro.text]).toEqual([200, contents[name]!.get("docs/readme.md")]);
    for (const refused of [
      await write(b.readOnly, "readme.md", "overwritten?"),
      await write(b.readOnly, "new.txt", "created?"),
      await answer(`${url(b.readOnly)}/file?path=readme.md`, { method: "DELETE" }),
    ]) {
      expect(refused.status, refused.text).toBe(403);
      expect(refused.code).toBe("forbidden");
    }
    expect((await read(b.root, "docs/readme.md")).text).toBe(contents[name]!.get("docs/readme.md"));
    for (const cap of killed[name]!) await expectDead(cap);
    if (b.davProp) {
      const p = b.davProp;
      const found = await answer(`${url(b.root)}/dav/${p.path}`, {
        method: "PROPFIND",
        headers: { depth: "0", "content-type": "application/xml" },
        body: `<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><${p.name} xmlns="${p.namespace}"/></D:prop></D:propfind>`,
      });
      expect(found.status, found.text).toBe(207);
      expect(found.text).toContain(p.value);
    }
    if (b.holder && signer) {
      const bound = url(b.holder);
      const bare = await answer(bound);
      const unknown = await answer(`${vault.url}/object/${forged(b.holder.token)}`);
      expect([bare.status, bare.text]).toEqual([unknown.status, unknown.text]);
      expect(bare.code).toBe("no_such_cap");
      const holder = b.holder;
      const prove = async () =>
        read(holder, "today.md", await proofHeader(signer!, "GET", `${bound}/file`, holder.token));
      let proved = await prove();
      // Right after a restart, a cap used in its last life refuses its holder's proofs (401) until the holder's clock
      // passes the replay mark it stored, at most about 10 s (docs/holder-bound.md): poll, bounded.
      for (let i = 0; i < 40 && proved.status === 401; i++) {
        await sleep(500);
        proved = await prove();
      }
      expect([proved.status, proved.text]).toEqual([200, contents[name]!.get("notes/today.md")]);
      const other = await holderSigner(await otherKey());
      const wrongKey = await read(
        b.holder,
        "today.md",
        await proofHeader(other, "GET", `${bound}/file`, b.holder.token),
      );
      expect([wrongKey.status, wrongKey.text]).toEqual([unknown.status, unknown.text]);
    }
  };

  /** The checks before the restart, one test each (in a describe of their own). */
  const define = () => {
    for (const name of ["r2", "disk"] as const) {
      const b = () => manifest.backends[name];

      it(`${name}: caps read, list and write, and history continues`, async () => {
        await filesHold(name, b());
        const next = `# Today (${name})\n\nwritten by today's code\n`;
        const put = await write(b().root, "notes/today.md", next, { "content-type": "text/markdown" });
        expect(put.status, put.text).toBe(200);
        wrote(name, "notes/today.md", next);
        const added = await write(b().root, "new/after-upgrade.txt", "a new folder and file\n");
        expect(added.status, added.text).toBe(201);
        wrote(name, "new/after-upgrade.txt", "a new folder and file\n");
        await filesHold(name, b());

        const old = b().files.find((f) => f.path === "notes/today.md")!;
        const ids = await versionIds(b(), "notes/today.md");
        if (old.versions) {
          // The old versions, newest first, under the new one; the oldest still holds its bytes.
          expect(ids.slice(1)).toEqual(old.versions);
          expect(ids).toHaveLength(old.versions.length + 1);
          const first = await answer(`${url(b().root)}/versions/${q(old.versions.at(-1)!)}`);
          expect([first.status, first.text]).toEqual([200, `# Today (${name})\n\nversion 1\n`]);
        } else {
          // Before versions were kept, history starts with the first write after the upgrade.
          expect(ids).toHaveLength(1);
        }
        const newest = await answer(`${url(b().root)}/versions/${q(ids[0]!)}`);
        expect([newest.status, newest.text]).toEqual([200, next]);
        history[name] = ids;
      });

      it(`${name}: read-only children stay read-only, grandchildren work and mint, the dead stay dead`, async () => {
        await capsHold(name, b());
        const g = b().grandchild;
        expect((await read(g, "g.txt")).text).toBe(contents[name]!.get("work/sub/g.txt"));
        expect((await write(g, "g.txt", "grandchild after the upgrade\n")).status).toBe(200);
        wrote(name, "work/sub/g.txt", "grandchild after the upgrade\n");
        const great = await mint(g, { path: "deeper", rights: ["read", "write", "list"], label: "great-grandchild" });
        expect((await write(great, "x.txt", "three levels down\n")).status).toBe(201);
        wrote(name, "work/sub/deeper/x.txt", "three levels down\n");
        expect((await read(b().root, "work/sub/deeper/x.txt")).text).toBe("three levels down\n");
        expect((await write(b().rwChild, "plan.txt", "plan: still working\n")).status).toBe(200);
        wrote(name, "work/plan.txt", "plan: still working\n");

        // Revocation cascades: the read-write child takes its grandchild and the new great-grandchild with it.
        const revoked = await answer(url(b().rwChild), { method: "DELETE" });
        expect([202, 204]).toContain(revoked.status);
        for (const cap of [b().rwChild, g, great]) {
          // A 202 leaves descendants to the alarm, which retries every 5 s: poll, bounded.
          for (let i = 0; i < 60 && (await answer(url(cap))).status !== 404; i++) await sleep(500);
          await expectDead(cap);
          killed[name]!.push(cap);
        }
        // Revocation never touches files.
        expect((await read(b().root, "work/plan.txt")).text).toBe("plan: still working\n");
      });

      it(`${name}: MCP reads through the root and the read-only child`, async () => {
        expect(await mcpRead(url(b().root), b().mcpFile.path)).toContain(b().mcpFile.content.trim());
        expect(await mcpRead(url(b().readOnly), "readme.md")).toContain(contents[name]!.get("docs/readme.md")!.trim());
      });

      it(`${name}: quotas still count and refuse`, async ({ skip }) => {
        const quota = b().quota;
        if (!quota) return skip("this commit had no quotas");
        const info = await answer(url(b().root));
        const body = JSON.parse(info.text) as {
          limits: { maxBytes: number; maxFiles: number };
          usage: { bytes: number; files: number };
        };
        expect(body.limits).toEqual({ maxBytes: quota.maxBytes, maxFiles: quota.maxFiles });
        // The old usage (kept versions included) and every byte written since, as the old vault counted them.
        const bytes = quota.usage.bytes + added[name]!;
        expect(body.usage).toEqual({ bytes, files: contents[name]!.size });
        const over = await write(b().root, "too-big.bin", "x".repeat(quota.maxBytes - bytes + 1));
        expect([over.status, over.code]).toEqual([507, "quota_exceeded"]);
      });
    }

    // Known gap (issue 33): a disk file's content type lives in a sidecar named by the file's device and inode
    // numbers (docs/storage.md), so any copy of the disk folder (this fixture, a backup, another machine) orphans
    // them, the start's sweep removes them, and every old file reads as application/octet-stream.
    it.fails("disk: the old files keep their content types (known gap: sidecars are named by inode)", async () => {
      const b = manifest.backends.disk;
      const file = b.files.find((f) => f.path === "docs/data.json")!;
      const got = await read(b.root, file.path);
      expect([got.status, got.text]).toEqual([200, file.content]);
      expect(got.headers.get("content-type")).toBe(file.contentType);
    });

    it("OAuth grants still refresh, and their token reads over MCP", async ({ skip }) => {
      const oauth = manifest.oauth;
      if (!oauth) return skip("this commit had no OAuth");
      await refreshAndRead(oauth);
    });

    it("DPoP-bound OAuth grants still refresh only with their key's proof", async ({ skip }) => {
      const grant = manifest.oauthDpop;
      if (!grant || !signer) return skip("this commit had no DPoP-bound OAuth tokens");
      await refreshAndReadBound(grant, signer);
    });
  };

  /** After the restart: what the checks above left must hold, and new caps still mint and die. */
  const afterRestart = async () => {
    expectDiskStamped(vault);
    for (const name of ["r2", "disk"] as const) {
      const b = manifest.backends[name];
      await filesHold(name, b);
      expect(await versionIds(b, "notes/today.md")).toEqual(history[name]);
      await capsHold(name, b);
      // A new child and grandchild mint and work, and die together.
      const child = await mint(b.root, { path: "after-restart", label: "after restart" });
      const grandchild = await mint(child, { path: "g", rights: ["read", "write"] });
      expect((await write(grandchild, "f.txt", "after the restart\n")).status).toBe(201);
      expect((await read(b.root, "after-restart/g/f.txt")).text).toBe("after the restart\n");
      expect([202, 204]).toContain((await answer(url(child), { method: "DELETE" })).status);
      for (let i = 0; i < 60 && (await answer(url(grandchild))).status !== 404; i++) await sleep(500);
      await expectDead(grandchild);
      expect(await mcpRead(url(b.root), b.mcpFile.path)).toContain(b.mcpFile.content.trim());
    }
    if (manifest.oauth) await refreshAndRead(manifest.oauth);
    if (manifest.oauthDpop && signer) await refreshAndReadBound(manifest.oauthDpop, signer);
  };

  /** A refresh of `grant` (its token rotates), or null when its 90 days are over and it was refused as it must be. */
  async function refresh(grant: FixtureGrant, headers: Record<string, string> = {}) {
    const refreshToken = refreshTokens.get(grant)!;
    const refreshed = await answer(`${vault.url}/oauth/token`, {
      method: "POST",
      headers,
      body: new URLSearchParams({
        grant_type: "refresh_token",
        refresh_token: refreshToken,
        client_id: grant.clientId,
        resource: `${vault.url}/mcp`,
      }),
    });
    if (grant.grantExpiresAt !== null && Date.parse(grant.grantExpiresAt) <= Date.now()) {
      // The fixture's grant lived 90 days: past that it must end as any expired grant does (rebuild the fixture).
      expect(refreshed.status, refreshed.text).toBe(400);
      return null;
    }
    expect(refreshed.status, refreshed.text).toBe(200);
    const tokens = JSON.parse(refreshed.text) as { access_token: string; refresh_token: string; token_type: string };
    expect(tokens.refresh_token).not.toBe(refreshToken);
    refreshTokens.set(grant, tokens.refresh_token);
    return tokens;
  }

  /** Refreshes a bearer grant, then reads through /mcp with the official client. */
  async function refreshAndRead(grant: FixtureGrant) {
    const tokens = await refresh(grant);
    if (!tokens) return;
    expect(tokens.token_type).toBe("Bearer");
    const text = await mcpRead(vault.url, grant.file.path, { authorization: `Bearer ${tokens.access_token}` });
    expect(text).toContain(contents.r2!.get(`notes/${grant.file.path}`)!.trim());
  }

  /** A bound grant: without a proof its refresh token is unknown (and stays usable), with one it rotates and reads. */
  async function refreshAndReadBound(grant: FixtureGrant, key: ProofSigner) {
    const tokenUrl = `${vault.url}/oauth/token`;
    const bare = await answer(tokenUrl, {
      method: "POST",
      body: new URLSearchParams({
        grant_type: "refresh_token",
        refresh_token: refreshTokens.get(grant)!,
        client_id: grant.clientId,
        resource: `${vault.url}/mcp`,
      }),
    });
    expect([bare.status, JSON.parse(bare.text).error]).toEqual([400, "invalid_grant"]);
    const tokens = await refresh(grant, await tokenEndpointProof(key, tokenUrl));
    if (!tokens) return;
    expect(tokens.token_type).toBe("DPoP");
    const call = toolCall(1, "read_file", { path: grant.file.path });
    const version = { "mcp-protocol-version": "2025-06-18" };
    const asBearer = await postMcp(vault.url, call, { ...version, authorization: `Bearer ${tokens.access_token}` });
    expect(asBearer.status).toBe(401);
    await asBearer.body?.cancel();
    const proof = await proofHeader(key, "POST", `${vault.url}/mcp`, tokens.access_token);
    const bound = await postMcp(vault.url, call, {
      ...version,
      authorization: `DPoP ${tokens.access_token}`,
      ...proof,
    });
    const text = await bound.text();
    expect(bound.status, text).toBe(200);
    expect(text).toContain(JSON.stringify(contents.r2!.get(`notes/${grant.file.path}`)!).slice(1, -1));
  }

  return {
    name: fixtureName,
    async start() {
      vault = await startTestVault({ from: { state: path.join(dir, "state"), diskRoot: path.join(dir, "disk") } });
      if (manifest.holderKey) signer = await holderSigner(manifest.holderKey);
    },
    async restart() {
      await mcp.closeAll();
      await vault.restart();
    },
    async stop() {
      await mcp.closeAll();
      await vault?.stop();
    },
    define,
    afterRestart,
  };
}

const zero = all.filter((f) => f.manifest.format === 0).map(formatZeroRun);
const later = all.filter((f) => f.manifest.format >= 1).map(formatOneRun);

// Each fixture's vault lives inside its own describe, started, restarted and stopped
// by that describe's hooks: a hook's bound then covers one launcher start. One
// hook that started every fixture's vault (a few at a time) grew with the number
// of fixtures, and under a full run's load it passed its bound (CI, 2 cores).
const lifecycle = (run: { start(): Promise<void>; stop(): Promise<void> }) => {
  beforeAll(() => run.start());
  afterAll(() => run.stop());
};

describe.each(zero)("fixture $name", (run) => {
  lifecycle(run);
  it("starts on the old state and answers its 32-character tokens with a 4xx, never a 5xx", () =>
    run.neverServerErrors());
  describe("after its vault restarted", () => {
    beforeAll(() => run.restart());
    it("still 4xx, never 5xx", () => run.neverServerErrors());
  });
});

describe.each(later)("fixture $name", (run) => {
  lifecycle(run);
  run.define();
  describe("after its vault restarted", () => {
    beforeAll(() => run.restart());
    it("the same holds", () => run.afterRestart());
  });
});

/** The disk host migrated the old folder when it started: the folder now says it is of today's format. */
function expectDiskStamped(vault: TestVault): void {
  const stamp = readFileSync(path.join(vault.diskRoot, FORMAT_FILE_NAME), "utf8");
  expect(parseFormatStamp(stamp)).toBe(STATE_FORMAT);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function otherKey(): Promise<NonNullable<FixtureManifest["holderKey"]>> {
  const pair = (await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"])) as CryptoKeyPair;
  const privateJwk = (await crypto.subtle.exportKey("jwk", pair.privateKey)) as JsonWebKey;
  const pub = (await crypto.subtle.exportKey("jwk", pair.publicKey)) as JsonWebKey;
  return { privateJwk, publicJwk: { kty: "OKP", crv: "Ed25519", x: pub.x! } };
}
