/**
 * State format 0 (commit 5055285: unsigned 32-character tokens): its tokens
 * get `410 legacy_token` on every surface, the same bytes whether or not such
 * a cap ever existed and without asking any object, and the admin's
 * `POST /admin/reissue-legacy` gives its caps signed tokens over the same
 * files, rights and tree (docs/upgrading.md).
 *
 * The format-0 state is written here exactly as 5055285 stored it
 * (`git show 5055285:durable-objects/root-registry.ts`, `cap-object.ts`,
 * `audit-log.ts`): a registry entry `root:<id>`, each cap's `cap` record and
 * its parent's `child:<id>`, the first audit table, and the files in R2
 * under the root prefix. Only the objects' own storage is written, through
 * `runInDurableObject`; every check goes through the worker.
 */
import { env, listDurableObjectIds, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { CapRecord } from "../../durable-objects/cap-record.ts";
import { capObjectStub, rootRegistryStub } from "../../durable-objects/object-stubs.ts";
import { base32, digestToken, reissuedToken } from "../../shared/token.ts";
import type { ReissuedCap, ReissueStep } from "../../shared/wire-types.ts";
import { ADMIN, call, cap, errorCode, mintRoot } from "./vault.ts";

const LEGACY_MESSAGE =
  "this token was minted by capvault before signed tokens (state format 0) and opens nothing now; " +
  "the vault's admin re-issues these caps with `capvault reissue-legacy`: see docs/upgrading.md";

const legacyToken = () => base32(crypto.getRandomValues(new Uint8Array(20)));

interface Format0Cap {
  token: string;
  id: string;
  key: string;
}

/** Writes one format-0 cap's object: its record, its children's index entries, and a first-format audit line. */
async function writeFormat0Cap(
  me: Format0Cap,
  record: { root: string[]; rights: string[]; label: string | null; parent: Format0Cap | null; createdAt: number },
  children: { cap: Format0Cap; path: string; rights: string[]; label: string | null; createdAt: number }[],
  audit: { op: string; path: string | null; child: string | null }[],
): Promise<void> {
  await runInDurableObject(capObjectStub(env, me.key), async (_instance, state) => {
    await state.storage.put("cap", {
      id: me.id,
      key: me.key,
      backend: "r2",
      root: record.root,
      rights: record.rights,
      label: record.label,
      createdAt: record.createdAt,
      expiresAt: null,
      parent: record.parent ? { id: record.parent.id, key: record.parent.key } : null,
    });
    for (const c of children) {
      await state.storage.put(`child:${c.cap.id}`, {
        id: c.cap.id,
        key: c.cap.key,
        label: c.label,
        path: c.path,
        rights: c.rights,
        createdAt: c.createdAt,
        expiresAt: null,
      });
    }
    state.storage.sql.exec(`CREATE TABLE IF NOT EXISTS audit (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      at INTEGER NOT NULL, op TEXT NOT NULL, path TEXT, outcome TEXT NOT NULL, child TEXT)`);
    for (const line of audit)
      state.storage.sql.exec(
        "INSERT INTO audit (at, op, path, outcome, child) VALUES (?, ?, ?, ?, ?)",
        record.createdAt + 1000,
        line.op,
        line.path,
        "ok",
        line.child,
      );
  });
}

async function format0Cap(): Promise<Format0Cap> {
  const token = legacyToken();
  return { token, ...(await digestToken(token)) };
}

/**
 * A format-0 vault's tree: a root over `prefix` (all rights), a read-only
 * child over `docs` that minted a grandchild over `docs/deep`, and files.
 */
async function format0Tree(prefix: string) {
  const [root, child, grandchild] = [await format0Cap(), await format0Cap(), await format0Cap()];
  const t = Date.now() - 86_400_000;
  const all = ["read", "write", "delete", "list", "subdir"];
  await runInDurableObject(rootRegistryStub(env), async (_instance, state) => {
    await state.storage.put(`root:${root.id}`, {
      id: root.id,
      key: root.key,
      label: "format 0 root",
      backend: "r2",
      prefix,
      rights: all,
      createdAt: t,
      expiresAt: null,
    });
  });
  const childRights = ["read", "list", "subdir"];
  await writeFormat0Cap(
    root,
    { root: [prefix], rights: all, label: "format 0 root", parent: null, createdAt: t },
    [{ cap: child, path: "docs", rights: childRights, label: "reader", createdAt: t + 1 }],
    [
      { op: "write", path: "docs/a.md", child: null },
      { op: "subdir", path: "docs", child: child.id },
    ],
  );
  await writeFormat0Cap(
    child,
    { root: [prefix, "docs/"], rights: childRights, label: "reader", parent: root, createdAt: t + 1 },
    [{ cap: grandchild, path: "deep", rights: ["read"], label: "deep reader", createdAt: t + 2 }],
    [{ op: "subdir", path: "deep", child: grandchild.id }],
  );
  await writeFormat0Cap(
    grandchild,
    { root: [prefix, "docs/", "deep/"], rights: ["read"], label: "deep reader", parent: child, createdAt: t + 2 },
    [],
    [],
  );
  await env.BUCKET.put(`${prefix}docs/a.md`, "format 0 bytes");
  await env.BUCKET.put(`${prefix}docs/deep/b.md`, "deeper bytes");
  await env.BUCKET.put(`${prefix}top.txt`, "top");
  return { root, child, grandchild };
}

const admin = { authorization: `Bearer ${ADMIN}` };

async function step(json: Record<string, unknown>): Promise<ReissueStep> {
  const res = await call("POST", "/admin/reissue-legacy", { headers: admin, json });
  if (res.status !== 200) throw new Error(`reissue step failed: ${res.status} ${await res.text()}`);
  return res.json();
}

/** What `capvault reissue-legacy` does: steps until done, acknowledging each answer's caps in the next. */
async function reissueAll(mintedBefore: string): Promise<ReissuedCap[]> {
  const rows: ReissuedCap[] = [];
  let ack: string[] = [];
  for (let i = 0; i < 2000; i++) {
    const answer = await step({ mintedBefore, ack });
    rows.push(...answer.reissued);
    ack = answer.reissued.map((r) => r.oldId);
    if (answer.done) return rows;
  }
  throw new Error("the re-issue never finished");
}

const tokenOf = (url: string) => url.slice(url.lastIndexOf("/") + 1);
/** A file's bytes as text (format 0's files carry no content type of their own). */
const bytes = async (res: Response) => new TextDecoder().decode(await res.arrayBuffer());

/** Every surface a token arrives on, each as the raw Response. */
function surfaces(token: string): [string, () => Promise<Response>][] {
  const base = `/object/${token}`;
  const basic = `Basic ${btoa(`agent:${token}`)}`;
  const rpc = JSON.stringify(["push", ["pipeline", 0, ["describe"], []]]);
  const mcp = { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} };
  return [
    ["info", () => call("GET", base)],
    ["read", () => call("GET", `${base}/file?path=docs/a.md`)],
    ["write", () => call("PUT", `${base}/file?path=x`, { body: "x" })],
    ["list", () => call("GET", `${base}/list?path=`)],
    ["children", () => call("GET", `${base}/children`)],
    ["versions", () => call("GET", `${base}/versions?path=docs/a.md`)],
    ["search", () => call("GET", `${base}/search?pattern=x`)],
    ["revoke", () => call("DELETE", base)],
    ["header", () => call("GET", "/cap/list?path=", { headers: { authorization: `Bearer ${token}` } })],
    [
      "mcp",
      () => call("POST", `${base}/mcp`, { json: mcp, headers: { accept: "application/json, text/event-stream" } }),
    ],
    ["rpc", () => call("POST", `${base}/rpc`, { body: rpc })],
    ["memory", () => call("POST", `${base}/memory`, { json: { command: "view", path: "/memories" } })],
    ["dav", () => call("PROPFIND", `${base}/dav/`, { headers: { depth: "1" } })],
    ["dav basic", () => call("PROPFIND", "/dav/", { headers: { depth: "1", authorization: basic } })],
  ];
}

describe("format-0 tokens", () => {
  it("answer 410 legacy_token on every surface, byte for byte alike for a real and a made-up one, and address no object", async () => {
    const { root } = await format0Tree("legacy/refusal/");
    const made = legacyToken();
    const before = (await listDurableObjectIds(env.CAPS)).map(String).sort();
    const expected = `${JSON.stringify({ error: { code: "legacy_token", message: LEGACY_MESSAGE } })}\n`;
    for (const token of [root.token, made]) {
      for (const [name, request] of surfaces(token)) {
        const res = await request();
        expect(`${name} ${res.status}`).toBe(`${name} 410`);
        expect(await res.text(), name).toBe(expected);
      }
    }
    expect((await listDurableObjectIds(env.CAPS)).map(String).sort()).toEqual(before);
  });

  it("leave every other wrong shape at 404 no_such_cap", async () => {
    for (const token of ["a".repeat(31), "a".repeat(33), legacyToken().toUpperCase(), `${legacyToken().slice(1)}1`]) {
      const res = await call("GET", `/object/${token}`);
      expect(res.status, token).toBe(404);
      expect(await errorCode(res)).toBe("no_such_cap");
    }
  });
});

describe("capvault reissue-legacy (POST /admin/reissue-legacy)", () => {
  it("needs the admin token, and a cutoff when the launcher recorded none", async () => {
    const anonymous = await call("POST", "/admin/reissue-legacy", { json: {} });
    expect(anonymous.status).toBe(401);
    const noCutoff = await call("POST", "/admin/reissue-legacy", { headers: admin, json: {} });
    expect(noCutoff.status).toBe(400);
    expect(await noCutoff.json()).toMatchObject({ error: { message: expect.stringContaining("--minted-before") } });
    for (const json of [
      { mintedBefore: "yesterday" },
      { mintedBefore: new Date(Date.now() + 3_600_000).toISOString() },
      { mintedBefore: new Date().toISOString(), ack: "x" },
      { mintedBefore: new Date().toISOString(), extra: 1 },
    ]) {
      const res = await call("POST", "/admin/reissue-legacy", { headers: admin, json });
      expect(res.status, JSON.stringify(json)).toBe(400);
    }
  });

  it("re-issues a format-0 tree: same files, rights, labels and tree under new signed tokens; the old ones stay dead; a rerun does nothing", async () => {
    const { root, child, grandchild } = await format0Tree("legacy/reissue/");
    // A root minted with signed tokens before the cutoff: its record is newer than format 0's, so it is left alone.
    const modern = cap((await mintRoot("legacy/modern/")).token);
    const mintedBefore = new Date().toISOString();
    const rows = await reissueAll(mintedBefore);
    const byOld = new Map(rows.map((r) => [r.oldId, r]));
    expect([...byOld.keys()]).toEqual(expect.arrayContaining([root.id, child.id, grandchild.id]));
    expect(rows.filter((r) => [root.id, child.id, grandchild.id].includes(r.oldId))).toHaveLength(3);
    const [newRoot, newChild, newGrandchild] = [root, child, grandchild].map((c) => byOld.get(c.id)!);
    expect(newRoot).toMatchObject({ label: "format 0 root", parent: null, depth: 0 });
    expect(newChild).toMatchObject({ label: "reader", parent: newRoot!.id, depth: 1 });
    expect(newGrandchild).toMatchObject({ label: "deep reader", parent: newChild!.id, depth: 2 });

    const r = cap(tokenOf(newRoot!.url));
    const c = cap(tokenOf(newChild!.url));
    const g = cap(tokenOf(newGrandchild!.url));
    // The files, read through each level of the tree.
    expect(await bytes(await r.read("docs/a.md"))).toBe("format 0 bytes");
    expect(await bytes(await c.read("a.md"))).toBe("format 0 bytes");
    expect(await bytes(await g.read("b.md"))).toBe("deeper bytes");
    expect(await errorCode(await c.read("../top.txt"))).toBe("path_escapes");
    // Rights and labels as they were.
    expect(await (await r.info()).json()).toMatchObject({ id: newRoot!.id, label: "format 0 root", parent: null });
    expect(await (await c.info()).json()).toMatchObject({
      rights: ["read", "list", "subdir"],
      label: "reader",
      parent: newRoot!.id,
    });
    expect(await errorCode(await c.write("new.md", "x"))).toBe("forbidden");
    expect(await errorCode(await g.read("../a.md"))).toBe("path_escapes");
    // The tree: the root lists its child under the new id, with its path, and mints as any cap does.
    const children = (await (await r.children()).json()) as { children: { id: string; path: string }[] };
    expect(children.children).toEqual([expect.objectContaining({ id: newChild!.id, path: "docs", label: "reader" })]);
    const fresh = await c.subdir({ path: "deep", rights: ["read"] });
    expect(fresh.status).toBe(201);
    // Writes go on and become versions.
    expect((await r.write("docs/a.md", "v2")).status).toBe(200);
    const versions = (await (await call("GET", `/object/${r.token}/versions?path=docs/a.md`)).json()) as {
      versions: unknown[];
    };
    expect(versions.versions.length).toBeGreaterThanOrEqual(1);
    // The audit carries format 0's lines, then says where the cap came from.
    const audit = (await (await call("GET", `/object/${r.token}/audit?limit=10`)).json()) as {
      entries: { op: string; path: string | null; child: string | null }[];
    };
    const ops = audit.entries.map((e) => `${e.op} ${e.child ?? e.path ?? ""}`);
    expect(ops).toEqual(expect.arrayContaining([`reissue ${root.id}`, `subdir ${child.id}`, "write docs/a.md"]));
    // The registry lists the new root in place of the old.
    const listed = (await (await call("GET", "/admin/roots", { headers: admin })).json()) as {
      roots: { id: string }[];
    };
    const ids = listed.roots.map((x) => x.id);
    expect(ids).toContain(newRoot!.id);
    expect(ids).not.toContain(root.id);
    // The old objects hold nothing; their tokens still get the one format-0 answer.
    for (const old of [root, child, grandchild]) {
      const left = await runInDurableObject(capObjectStub(env, old.key), (_i, state) => state.storage.list());
      expect(left.size).toBe(0);
      expect((await call("GET", `/object/${old.token}`)).status).toBe(410);
    }
    // The modern root was never touched.
    expect((await modern.info()).status).toBe(200);
    // A rerun finds nothing, and a revocation of the new root cascades down the new tree.
    expect(await reissueAll(mintedBefore)).toEqual([]);
    expect((await r.revoke()).status).toBeLessThan(300);
    for (const dead of [r, c, g]) expect(await errorCode(await dead.info())).toBe("no_such_cap");
  });

  it("works in bounded steps that can be cut anywhere: a lost answer is sent again with the same URLs", async () => {
    const { root, child, grandchild } = await format0Tree("legacy/steps/");
    const until = Date.now();
    const registry = rootRegistryStub(env);
    const rows = new Map<string, string>();
    let ack: string[] = [];
    let steps = 0;
    for (; steps < 5000; steps++) {
      // One unit of work per step: a cap made, a page of children listed, or a page of roots read.
      const answer = await registry.reissueLegacy({ until, ack, budget: 1 }, "https://vault.test");
      if (!answer.ok) throw new Error(answer.error.message);
      if (answer.value.reissued.length > 0) {
        // The answer is lost: nothing acknowledged, so the next step hands the same caps again.
        const again = await registry.reissueLegacy({ until, ack: [], budget: 1 }, "https://vault.test");
        expect(again.ok && again.value.reissued).toEqual(answer.value.reissued);
      }
      for (const row of answer.value.reissued) {
        if (rows.has(row.oldId)) expect(rows.get(row.oldId)).toBe(row.url);
        rows.set(row.oldId, row.url);
      }
      ack = answer.value.reissued.map((row) => row.oldId);
      if (answer.value.done) break;
    }
    expect(steps).toBeGreaterThan(3);
    for (const old of [root, child, grandchild]) {
      const url = rows.get(old.id);
      expect(url, old.id).toBeDefined();
      expect((await cap(tokenOf(url!)).info()).status).toBe(200);
    }
    expect(await bytes(await cap(tokenOf(rows.get(grandchild.id)!)).read("b.md"))).toBe("deeper bytes");
  });

  it("a run cut inside a unit, after the new object took its record, finishes without a second copy of anything", async () => {
    const { root, child } = await format0Tree("legacy/cut/");
    // What a step killed right after the root's new object took its record leaves behind.
    const token = await reissuedToken(env.CAPVAULT_TOKEN_KEY, root.key);
    if (!token.ok) throw new Error(token.error.message);
    const fresh = await digestToken(token.value);
    const record = await runInDurableObject(capObjectStub(env, root.key), (_i, state) =>
      state.storage.get<CapRecord>("cap"),
    );
    if (!record) throw new Error("the format-0 root has no record");
    const early = await capObjectStub(env, fresh.key).adoptReissued(
      { ...record, id: fresh.id, key: fresh.key, parent: null, depth: 0, reissuedFrom: root.id },
      [],
    );
    expect(early.ok && early.value).toBe("made");
    const rows = await reissueAll(new Date().toISOString());
    const newRoot = rows.find((r) => r.oldId === root.id)!;
    expect(newRoot.url).toBe(`https://vault.test/object/${token.value}`);
    const r = cap(token.value);
    const audit = (await (await call("GET", `/object/${r.token}/audit?limit=50`)).json()) as {
      entries: { op: string }[];
    };
    expect(audit.entries.filter((e) => e.op === "reissue")).toHaveLength(1);
    const children = (await (await r.children()).json()) as { children: { id: string }[] };
    expect(children.children.map((c) => c.id)).toEqual([rows.find((x) => x.oldId === child.id)!.id]);
    expect(await bytes(await r.read("top.txt"))).toBe("top");
  });
});
