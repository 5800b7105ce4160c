import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FsCap } from "../../clients/typescript/fs-cap.ts";
import { HolderKey } from "../../clients/typescript/holder.ts";
import { runInProcess } from "../cli-test-io.ts";
import { mintRoot, NODE_ARGS, startTestVault, type TestVault } from "./test-vault.ts";

/**
 * `capvault export` and `capvault import` (docs/export-import.md) between
 * real launchers: every cap URL minted before the export answers after the
 * import with the same token, and its files, versions, tree, rights, expiry,
 * quotas, labels and audit came along; damaged archives change nothing.
 */

const admin = (vault: TestVault) => ({ CAPVAULT_URL: vault.url, CAPVAULT_ADMIN_TOKEN: vault.adminToken });
/** The same cap token on another vault's origin: the token is the cap, the origin only where it is served. */
const on = (vault: TestVault, capUrl: string) => `${vault.url}/object/${capUrl.split("/object/")[1]}`;

async function adminJson(vault: TestVault, route: string, init: RequestInit = {}) {
  const res = await fetch(`${vault.url}/admin${route}`, {
    ...init,
    headers: { authorization: `Bearer ${vault.adminToken}`, ...(init.headers ?? {}) },
  });
  return { status: res.status, body: res.status === 204 ? null : await res.json() };
}

/** Revokes every root a fresh launcher minted, so the vault is empty for an import. */
async function emptyVault(vault: TestVault) {
  const { body } = await adminJson(vault, "/roots");
  for (const root of (body as { roots: { id: string }[] }).roots)
    await adminJson(vault, `/roots/${root.id}`, { method: "DELETE" });
}

async function capJson(url: string, route = "") {
  const res = await fetch(`${url}${route}`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

interface Source {
  r2: string;
  disk: string;
  reader: string;
  grandchild: string;
  expiring: string;
  quota: string;
  bound: string;
  holder: HolderKey;
  big: Buffer;
  versions: unknown;
  audit: unknown;
  readerInfo: unknown;
  /** A cap whose audit alone is more than one import call takes (1,000 lines of a long path), and that audit. */
  chatty: string;
  chattyAudit: unknown;
  /** The keys of the OAuth registry's carried entries after a client registered and a grant was made. */
  oauthKeys: string[];
}

const b64url = (bytes: Buffer) => bytes.toString("base64url");

/** An OAuth client registers and gets a grant over `capToken`'s notes, as oauth.workers.test.ts scripts it. */
async function oauthGrant(vault: TestVault, capUrl: string) {
  const redirect = "http://127.0.0.1:9/cb";
  const reg = await fetch(`${vault.url}/oauth/register`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ redirect_uris: [redirect], client_name: "export test" }),
  });
  expect(reg.status).toBe(201);
  const clientId = ((await reg.json()) as { client_id: string }).client_id;
  const verifier = b64url(randomBytes(32));
  const challenge = b64url(createHash("sha256").update(verifier).digest());
  const form = (fields: Record<string, string | string[]>) => {
    const body = new URLSearchParams();
    for (const [k, v] of Object.entries(fields)) for (const one of [v].flat()) body.append(k, one);
    return { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: body.toString() };
  };
  const resource = `${vault.url}/mcp`;
  const approved = await fetch(`${vault.url}/oauth/authorize`, {
    ...form({
      client_id: clientId,
      redirect_uri: redirect,
      response_type: "code",
      code_challenge: challenge,
      code_challenge_method: "S256",
      state: "s",
      resource,
      cap: capUrl.split("/object/")[1]!,
      path: "notes",
      rights: ["read", "list"],
      ttl: "86400",
      decision: "approve",
    }),
    redirect: "manual",
  });
  expect(approved.status).toBe(302);
  const code = new URL(approved.headers.get("location")!).searchParams.get("code")!;
  const tokens = await fetch(`${vault.url}/oauth/token`, {
    ...form({
      grant_type: "authorization_code",
      code,
      redirect_uri: redirect,
      client_id: clientId,
      code_verifier: verifier,
      resource,
    }),
  });
  expect(tokens.status).toBe(200);
}

async function oauthKeys(vault: TestVault): Promise<string[]> {
  const keys: string[] = [];
  let cursor: string | null = null;
  do {
    const { body } = await adminJson(vault, `/export/oauth${cursor ? `?cursor=${encodeURIComponent(cursor)}` : ""}`);
    const page = body as { entries: [string, unknown][]; cursor: string | null };
    keys.push(...page.entries.map(([key]) => key));
    cursor = page.cursor;
  } while (cursor);
  return keys.sort();
}

let work: string;
let source: TestVault;
let made: Source;
let archive: string;
const targets: TestVault[] = [];

async function populate(vault: TestVault): Promise<Source> {
  await emptyVault(vault);
  const r2 = await mintRoot(vault, { backend: "r2", prefix: "alpha/", label: "alpha", keepVersions: 10 });
  const disk = await mintRoot(vault, { backend: "disk", prefix: "beta/", label: "beta" });
  const quota = await mintRoot(vault, { backend: "r2", prefix: "gamma/", maxBytes: 1_000_000 });
  const a = new FsCap(r2.url);
  await a.write("notes/plan.md", "v1");
  await a.write("notes/plan.md", "v2 of the plan");
  await a.write("gone.txt", "soon deleted");
  await a.delete("gone.txt");
  await a.write("empty.txt", "");
  // A file over a few MiB: it streams through export and import, never whole in memory.
  const big = randomBytes(6 * 1024 * 1024);
  await a.write("big.bin", big);
  const b = new FsCap(disk.url);
  await b.write("docs/readme.txt", "disk one");
  await b.write("docs/readme.txt", "disk two");
  await new FsCap(quota.url).write("q.txt", "quota'd");
  const reader = await a.subdir({ path: "notes", rights: ["read", "list", "subdir"], label: "reader" });
  const grandchild = await reader.subdir({ path: "", rights: ["read"], label: "grandchild" });
  const expiring = await b.subdir({ path: "docs", ttlSeconds: 3600, label: "an hour" });
  // More caps than one commit step makes live (25), so a commit can be cut between its steps.
  for (let i = 0; i < 27; i++) await expiring.subdir({ path: "", rights: ["read"], label: `bulk ${i}` });
  await oauthGrant(vault, r2.url);
  const holder = await HolderKey.generate();
  const bound = await a.subdir({ path: "notes", rights: ["read", "list"], holder: holder.publicJwk, label: "bound" });
  // About 560 KiB of audit (a line per write, each naming a 243-character path of two-byte letters): its import
  // stages the cap with what fits in one call and sends the rest by /admin/import/cap-page.
  const chatty = await a.subdir({ path: "chatty", rights: ["read", "write"], label: "chatty" });
  const long = Array.from({ length: 4 }, () => "ü".repeat(60)).join("/");
  const talker = new FsCap(chatty.url);
  for (let i = 0; i < 1000; i++) await talker.write(long, String(i));
  return {
    bound: bound.url,
    holder,
    r2: r2.url,
    disk: disk.url,
    reader: reader.url,
    grandchild: grandchild.url,
    expiring: expiring.url,
    quota: quota.url,
    big,
    versions: (await capJson(r2.url, "/versions?path=notes/plan.md")).body,
    audit: (await capJson(r2.url, "/audit")).body,
    readerInfo: (await capJson(reader.url)).body,
    chatty: chatty.url,
    chattyAudit: (await capJson(chatty.url, "/audit?limit=1100")).body,
    oauthKeys: await oauthKeys(vault),
  };
}

async function exportTo(file: string, extra: string[] = [], env: Record<string, string> = {}) {
  return runInProcess(["export", file, ...extra, "--json"], { env: { ...admin(source), ...env } });
}

async function importInto(vault: TestVault, file: string, extra: string[] = [], env: Record<string, string> = {}) {
  return runInProcess(["import", file, ...extra, "--json"], { env: { ...admin(vault), ...env } });
}

/** A target vault that signs with the archive's key and has no roots: what the docs' steps make. */
async function preparedTarget(): Promise<TestVault> {
  const vault = await startTestVault();
  targets.push(vault);
  const wrote = await runInProcess(["import", archive, "--write-key", vault.state]);
  expect(wrote.code, wrote.stderr).toBe(0);
  await vault.restart();
  await emptyVault(vault);
  return vault;
}

/** Everything the source made answers on `vault` as it did on the source. */
async function expectCarried(vault: TestVault, backends: { r2: "r2" | "disk"; disk: "r2" | "disk" }) {
  const a = new FsCap(on(vault, made.r2));
  expect(await a.readText("notes/plan.md")).toBe("v2 of the plan");
  expect(await a.readText("empty.txt")).toBe("");
  expect(Buffer.from(await a.read("big.bin")).equals(made.big)).toBe(true);
  await expect(a.readText("gone.txt")).rejects.toMatchObject({ code: "not_found" });
  // Versions with their ids, actors and times; older bytes readable.
  expect((await capJson(on(vault, made.r2), "/versions?path=notes/plan.md")).body).toEqual(made.versions);
  const versions = (made.versions as { versions: { id: string }[] }).versions;
  expect(new TextDecoder().decode(await a.readVersion(versions.at(-1)!.id))).toBe("v1");
  const gone = (await capJson(on(vault, made.r2), "/versions?path=gone.txt")).body as { versions: { id: string }[] };
  expect(new TextDecoder().decode(await a.readVersion(gone.versions.at(-1)!.id))).toBe("soon deleted");
  expect((await capJson(on(vault, made.r2), "/audit")).body).toEqual(made.audit);
  const chattyAudit = (await capJson(on(vault, made.chatty), "/audit?limit=1100")).body as { entries: unknown[] };
  expect(chattyAudit.entries).toHaveLength(1000);
  // More than one import call's 512 KiB, even counting the answer's longer times (an ISO string, not a number).
  expect(Buffer.byteLength(JSON.stringify(chattyAudit))).toBeGreaterThan(540 * 1024);
  expect(chattyAudit).toEqual(made.chattyAudit);
  // The tree, rights and labels.
  const reader = new FsCap(on(vault, made.reader));
  expect((await capJson(on(vault, made.reader))).body).toEqual(made.readerInfo);
  expect(await reader.readText("plan.md")).toBe("v2 of the plan");
  await expect(reader.write("plan.md", "no")).rejects.toMatchObject({ code: "forbidden" });
  expect((await reader.children()).map((c) => c.label)).toEqual(["grandchild"]);
  expect(await new FsCap(on(vault, made.grandchild)).readText("plan.md")).toBe("v2 of the plan");
  // The holder binding: the bound URL alone is no authority; with its key's proofs it reads.
  expect((await capJson(on(vault, made.bound))).status).toBe(404);
  expect(await new FsCap(on(vault, made.bound), { holder: made.holder }).readText("plan.md")).toBe("v2 of the plan");
  // Expiry and quotas.
  const expiring = (await capJson(on(vault, made.expiring))).body;
  expect(expiring.expiresAt).toBe(((await capJson(made.expiring)).body as { expiresAt: string }).expiresAt);
  expect(await new FsCap(on(vault, made.expiring)).readText("readme.txt")).toBe("disk two");
  const quota = (await capJson(on(vault, made.quota))).body as { limits: { maxBytes: number } };
  expect(quota.limits.maxBytes).toBe(1_000_000);
  const b = new FsCap(on(vault, made.disk));
  const diskVersions = await b.versions("docs/readme.txt");
  expect(diskVersions.versions).toHaveLength(2);
  expect(new TextDecoder().decode(await b.readVersion(diskVersions.versions[1]!.id))).toBe("disk one");
  // The OAuth client and its grant's records, as stored (its tokens are bound to the source's origin: docs).
  expect(made.oauthKeys.map((k) => k.split(":")[0])).toEqual(["access", "client", "grant", "refresh"]);
  expect(await oauthKeys(vault)).toEqual(made.oauthKeys);
  // Where the roots went.
  const { body } = await adminJson(vault, "/roots");
  const roots = (body as { roots: { label: string | null; backend: string }[] }).roots;
  expect(roots.find((r) => r.label === "alpha")?.backend).toBe(backends.r2);
  expect(roots.find((r) => r.label === "beta")?.backend).toBe(backends.disk);
}

beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), "capvault-export-"));
  source = await startTestVault();
  made = await populate(source);
  archive = path.join(work, "vault.capvault");
  const exported = await exportTo(archive);
  expect(exported.code, exported.stderr).toBe(0);
}, 180_000);

afterAll(async () => {
  await Promise.all([source?.stop(), ...targets.map((t) => t.stop())]);
  await rm(work, { recursive: true, force: true });
});

describe("export", () => {
  it("writes the archive mode 0600 and refuses to overwrite a file", async () => {
    expect((await stat(archive)).mode & 0o777).toBe(0o600);
    const again = await exportTo(archive);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("already exists");
  });

  it("never puts the token key or the admin token in its output", async () => {
    const file = path.join(work, "quiet.capvault");
    const run = await exportTo(file);
    const key = (await readFile(path.join(source.state, "token-key"), "utf8")).trim();
    expect(run.out + run.stderr).not.toContain(key);
    expect(run.out + run.stderr).not.toContain(source.adminToken);
  });
});

/** Runs `capvault export` in a process of its own; answers its peak RSS in bytes. */
async function exportRss(file: string): Promise<number> {
  const script = path.join(import.meta.dirname, "cli-max-rss.ts");
  const child = spawn(process.execPath, [...NODE_ARGS, script, "export", file], {
    env: { ...process.env, ...admin(source) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (c: Buffer) => {
    stderr += c.toString();
  });
  const code = await new Promise((resolve) => child.once("exit", resolve));
  expect(code, stderr).toBe(0);
  return Number(/maxrss=(\d+)/.exec(stderr)![1]) * 1024;
}

describe("export memory", () => {
  it("streams a large file: the export's peak memory does not grow with it", async () => {
    const before = await exportRss(path.join(work, "rss-small.capvault"));
    const root = await mintRoot(source, { backend: "r2", prefix: "large/" });
    // Under the largest file a vault takes by default (CAPVAULT_MAX_FILE_BYTES, 100 MiB).
    const size = 96 * 1024 * 1024;
    const piece = randomBytes(1024 * 1024);
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.enqueue(piece);
      },
    });
    const sized = body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          sent += chunk.length;
          if (sent <= size) controller.enqueue(chunk);
          if (sent >= size) controller.terminate();
        },
      }),
    );
    let sent = 0;
    await new FsCap(root.url).write("large.bin", sized, { length: size });
    const after = await exportRss(path.join(work, "rss-large.capvault"));
    expect((await stat(path.join(work, "rss-large.capvault"))).size).toBeGreaterThan(size);
    // A buffered file would add its 96 MiB; streamed, the peak moves by a few chunks.
    expect(after - before).toBeLessThan(40 * 1024 * 1024);
    await fetch(`${source.url}/admin/roots/${root.id}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${source.adminToken}` },
    });
  }, 300_000);
});

describe("import", () => {
  let target: TestVault;
  beforeAll(async () => {
    target = await startTestVault();
    targets.push(target);
  }, 120_000);

  it("refuses a vault with another token key, saying how to set it, and changes nothing", async () => {
    const run = await importInto(target, archive);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("key_mismatch");
    expect(run.stderr).toContain("--write-key");
    expect(run.stderr).toContain("wrangler secret put CAPVAULT_TOKEN_KEY");
    expect((await adminJson(target, "/state")).body).toMatchObject({ open: null, committing: false });
  });

  it("--print-key writes the archive's token key, and nothing else, to a pipe", async () => {
    const key = (await readFile(path.join(source.state, "token-key"), "utf8")).trim();
    const run = await runInProcess(["import", archive, "--print-key"]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.out).toBe(`${key}\n`);
    expect(run.stderr).not.toContain(key);
  });

  it("round trip on the same backends: every cap URL works unchanged", async () => {
    const wrote = await runInProcess(["import", archive, "--write-key", target.state]);
    expect(wrote.code, wrote.stderr).toBe(0);
    await target.restart();
    // A vault with roots is refused without --merge.
    const refused = await importInto(target, archive);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("vault_not_empty");
    // With --merge, a root of the vault whose prefix nests in one of the archive's is refused before anything opens
    // (the vault's own roots first out of the way: its disk root, prefix "", overlaps every disk root).
    await emptyVault(target);
    const inner = await mintRoot(target, { backend: "r2", prefix: "alpha/inner/" });
    const overlapping = await importInto(target, archive, ["--merge"]);
    expect(overlapping.code).toBe(1);
    expect(overlapping.stderr).toContain("merge_conflict");
    expect(overlapping.stderr).toContain(inner.id);
    expect((await adminJson(target, "/state")).body).toMatchObject({ open: null, committing: false });
    await emptyVault(target);
    // No cap of the archive answers before the import.
    expect((await capJson(on(target, made.r2))).status).toBe(404);
    const run = await importInto(target, archive);
    expect(run.code, run.stderr).toBe(0);
    await expectCarried(target, { r2: "r2", disk: "disk" });
    // History goes on from the imported ids.
    const a = new FsCap(on(target, made.r2));
    await a.write("notes/plan.md", "v3");
    const after = (await a.versions("notes/plan.md")).versions;
    expect(Number(after[0]!.id)).toBeGreaterThan(Number(after[1]!.id));
  }, 120_000);

  it("r2 → disk with --backend disk", async () => {
    const vault = await preparedTarget();
    const run = await importInto(vault, archive, ["--backend", "disk"]);
    expect(run.code, run.stderr).toBe(0);
    await expectCarried(vault, { r2: "disk", disk: "disk" });
    expect(await readFile(path.join(vault.diskRoot, "alpha/notes/plan.md"), "utf8")).toBe("v2 of the plan");
  }, 120_000);

  it("disk → r2 with --backend r2, from an encrypted archive", async () => {
    const phrase = path.join(work, "phrase");
    await writeFile(phrase, "correct horse battery staple\n", { mode: 0o600 });
    const sealed = path.join(work, "sealed.capvault");
    const exported = await exportTo(sealed, ["--passphrase-file", phrase]);
    expect(exported.code, exported.stderr).toBe(0);
    expect((await readFile(sealed)).includes(Buffer.from("v2 of the plan"))).toBe(false);
    const vault = await preparedTarget();
    const wrong = await importInto(vault, sealed, ["--passphrase-env", "PHRASE"], { PHRASE: "not the passphrase" });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain("wrong_passphrase");
    const none = await importInto(vault, sealed);
    expect(none.stderr).toContain("passphrase_required");
    const run = await importInto(vault, sealed, ["--backend", "r2", "--passphrase-file", phrase]);
    expect(run.code, run.stderr).toBe(0);
    await expectCarried(vault, { r2: "r2", disk: "r2" });
  }, 180_000);
});

describe("bad archives change nothing", () => {
  let target: TestVault;
  let bytes: Buffer;
  beforeAll(async () => {
    target = await preparedTarget();
    bytes = await readFile(archive);
  }, 120_000);

  const cases: [string, (b: Buffer) => Buffer, string][] = [
    ["truncated", (b) => b.subarray(0, Math.floor(b.length / 2)), "archive_truncated"],
    ["cut before its end record", (b) => b.subarray(0, b.lastIndexOf(Buffer.from('{"t":"end"'))), "archive_truncated"],
    [
      "one byte flipped in a file",
      (b) => {
        const c = Buffer.from(b);
        const at = c.indexOf(Buffer.from("v2 of the plan"));
        c[at] = c[at]! ^ 1;
        return c;
      },
      "archive_corrupt",
    ],
    [
      "a tampered header",
      (b) => Buffer.from(b.toString("latin1").replace('"label":"reader"', '"label":"hacker"'), "latin1"),
      "archive_corrupt",
    ],
    [
      "a newer state format",
      (b) => Buffer.from(b.toString("latin1").replace(/"stateFormat":\d+/, '"stateFormat":99'), "latin1"),
      "archive_too_new",
    ],
    ["not an archive", () => Buffer.from("hello\n"), "not_an_archive"],
  ];

  for (const [name, damage, code] of cases)
    it(name, async () => {
      const file = path.join(work, `bad-${name.replace(/\W+/g, "-")}.capvault`);
      await writeFile(file, damage(bytes));
      const run = await importInto(target, file);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(code);
      expect((await adminJson(target, "/state")).body).toMatchObject({ hasRoots: false, open: null });
      expect((await capJson(on(target, made.r2))).status).toBe(404);
    });

  it("a truncated encrypted archive", async () => {
    const phrase = path.join(work, "phrase2");
    await writeFile(phrase, "another long passphrase\n", { mode: 0o600 });
    const sealed = path.join(work, "sealed2.capvault");
    expect((await exportTo(sealed, ["--passphrase-file", phrase])).code).toBe(0);
    const whole = await readFile(sealed);
    const cut = path.join(work, "sealed2-cut.capvault");
    await writeFile(cut, whole.subarray(0, whole.length - 100));
    const run = await importInto(target, cut, ["--passphrase-file", phrase]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/archive_truncated|archive_corrupt/);
    expect((await adminJson(target, "/state")).body).toMatchObject({ hasRoots: false, open: null });
  });
});

describe("an import killed with -9", () => {
  it("leaves no cap live before its commit; killed during the commit, the vault finishes it", async () => {
    const vault = await preparedTarget();
    let files = 0;
    const killing: typeof fetch = async (input, init) => {
      const url = String(input instanceof Request ? input.url : input);
      if (url.includes("/admin/import/file") && ++files === 3) {
        await vault.kill();
      }
      return fetch(input, init);
    };
    const cut = await runInProcess(["import", archive, "--json"], { env: admin(vault), fetch: killing });
    expect(cut.code).not.toBe(0);
    await vault.restart();
    // Staged, not live: no cap of the archive answers, and none of its roots is listed (the
    // launcher mints its own disk root again on the restart: the vault had none left).
    for (const url of [made.r2, made.disk, made.reader, made.grandchild])
      expect((await capJson(on(vault, url))).status).toBe(404);
    const listed = ((await adminJson(vault, "/roots")).body as { roots: { label: string | null }[] }).roots;
    expect(listed.map((r) => r.label)).toEqual(listed.length === 0 ? [] : ["disk"]);
    expect((await adminJson(vault, "/state")).body).toMatchObject({ committing: false, open: expect.any(String) });
    // The re-run dies once the commit has begun: after its first step the vault is killed.
    let committing = false;
    let firstStepDone: boolean | null = null;
    const killAfterCommitStep: typeof fetch = async (input, init) => {
      const url = String(input instanceof Request ? input.url : input);
      if (committing) throw new TypeError("the importer is gone");
      const res = await fetch(input, init);
      if (url.includes("/admin/import/commit")) {
        committing = true;
        firstStepDone = ((await res.clone().json()) as { done: boolean }).done;
        await vault.kill();
      }
      return res;
    };
    const dies = await runInProcess(["import", archive, "--json"], { env: admin(vault), fetch: killAfterCommitStep });
    expect(dies.code).not.toBe(0);
    expect(firstStepDone).toBe(false);
    await vault.restart();
    // Nobody runs the import again: the registry's alarm finishes the commit it recorded.
    for (let i = 0; i < 300; i++) {
      const { body } = await adminJson(vault, "/state");
      if ((body as { committing: boolean }).committing === false) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect((await adminJson(vault, "/state")).body).toMatchObject({ open: null, committing: false });
    await expectCarried(vault, { r2: "r2", disk: "disk" });
    const bulk = await new FsCap(on(vault, made.expiring)).children();
    expect(bulk.filter((c) => c.label?.startsWith("bulk ")).length).toBe(27);
    for (const child of bulk) expect(child.id).toMatch(/^[a-z2-7]+$/);
  }, 240_000);
});
