/**
 * The admin routes of vault export and import (docs/export-import.md) inside
 * workerd: pages at their bound and one past it, staged caps that answer as
 * unknown ones until the commit, and a commit cut short that the registry's
 * alarm finishes. The round trip between real launchers: test/node/export-import.node.test.ts.
 */

import { env, listDurableObjectIds, runDurableObjectAlarm } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { JOURNAL_PAGE_ROWS } from "../../durable-objects/journal-transfer.ts";
import { rootJournalStub, rootRegistryStub } from "../../durable-objects/object-stubs.ts";
import { digestToken } from "../../shared/token.ts";
import { archivedCap, auth, begin, finish, get, post } from "./archive-admin.ts";
import { call, cap, errorCode, mintRoot } from "./vault.ts";

const retention = { keepVersions: 1000, keepDays: 30 };

/** A journal holding `n` versions, one commit each. */
async function journalOf(prefix: string, n: number) {
  const journal = rootJournalStub(env, "r2", prefix);
  for (let i = 0; i < n; i++) {
    const done = await journal.commit("r2", { op: "delete", path: `f${i}` }, "actor", retention);
    expect(done.ok).toBe(true);
  }
}

async function versionPages(prefix: string) {
  const pages: { rows: { id: number }[]; next: string | null }[] = [];
  let cursor: string | null = null;
  do {
    const query = new URLSearchParams({ backend: "r2", prefix, table: "versions" });
    if (cursor) query.set("cursor", cursor);
    const page = (await get(`/export/journal?${query}`)) as unknown as (typeof pages)[number];
    pages.push(page);
    cursor = page.next;
  } while (cursor);
  return pages;
}

describe("export pages", () => {
  it("a journal of exactly one page, and of one row past it", async () => {
    await journalOf("ei-pages-exact/", JOURNAL_PAGE_ROWS);
    const exact = await versionPages("ei-pages-exact/");
    expect(exact.map((p) => p.rows.length)).toEqual([JOURNAL_PAGE_ROWS, 0]);
    await journalOf("ei-pages-past/", JOURNAL_PAGE_ROWS + 1);
    const past = await versionPages("ei-pages-past/");
    expect(past.map((p) => p.rows.length)).toEqual([JOURNAL_PAGE_ROWS, 1]);
    expect(past.flatMap((p) => p.rows.map((r) => r.id))).toEqual(
      Array.from({ length: JOURNAL_PAGE_ROWS + 1 }, (_, i) => i + 1),
    );
  });

  it("refuses a root no cap could have, on every route that names one (400, and no journal of that name made)", async () => {
    const archiveId = await begin();
    const journals = async () => (await listDurableObjectIds(env.JOURNALS)).map(String).sort();
    const before = await journals();
    for (const prefix of ["../x/", "..", "a", "/abs/", "/", ".capvault-versions/", "a//b/", "a/../", "a\\b/"]) {
      const q = new URLSearchParams({ backend: "r2", prefix, table: "versions" });
      const routes = [
        `/export/journal?${q}`,
        `/export/journal?${q}&table=blobs`,
        `/export/files?${q}`,
        `/export/file?${q}&path=a.md`,
      ];
      for (const route of routes)
        expect(await errorCode(await call("GET", `/admin${route}`, { headers: auth })), route).toBe("bad_request");
      // During an open import, so the refusal is the root's, not the import's.
      const journal = await post("/import/journal", { archiveId, backend: "r2", prefix, table: "versions", rows: [] });
      expect(await errorCode(journal), prefix).toBe("bad_request");
    }
    expect(await journals()).toEqual(before);
    const wrongBackend = await call("GET", "/admin/export/files?backend=s3&prefix=", { headers: auth });
    expect(await errorCode(wrongBackend)).toBe("bad_request");
    expect((await post("/import/abort", { archiveId })).status).toBe(200);
  });

  it("answers the key's fingerprint, never the key, in /admin/state", async () => {
    const state = await get("/state");
    expect(state.keyFingerprint).toMatch(/^[0-9a-f]{32}$/);
    expect(JSON.stringify(state)).not.toContain(env.CAPVAULT_TOKEN_KEY);
    expect((await call("GET", "/admin/state")).status).toBe(401);
  });
});

describe("import", () => {
  it("writes a page of journal rows at the bound, and refuses one past it", async () => {
    const archiveId = await begin();
    await journalOf("ei-copy-from/", JOURNAL_PAGE_ROWS + 1);
    const [first] = await versionPages("ei-copy-from/");
    const page = (rows: unknown[]) =>
      post("/import/journal", { archiveId, backend: "r2", prefix: "ei-copy-to/", table: "versions", rows });
    const tooMany = [...first!.rows, { ...first!.rows[0], id: 9999 }];
    expect(await errorCode(await page(tooMany))).toBe("bad_request");
    expect((await page(first!.rows)).status).toBe(200);
    const copied = await versionPages("ei-copy-to/");
    expect(copied.map((p) => p.rows.length)).toEqual([JOURNAL_PAGE_ROWS, 0]);
    expect(copied[0]!.rows).toEqual(first!.rows);
    // A journal with history of its own is never written by an import.
    const refused = await post("/import/journal", {
      archiveId,
      backend: "r2",
      prefix: "ei-copy-from/",
      table: "versions",
      rows: first!.rows.slice(0, 1),
    });
    expect(await errorCode(refused)).toBe("conflict");
    await finish(archiveId);
  });

  it("stages caps unseen; a commit cut short is finished by the registry's alarm", async () => {
    const archiveId = await begin();
    // One more cap than a commit step makes live, so the first step leaves work.
    const caps = await Promise.all(Array.from({ length: 26 }, (_, i) => archivedCap("ei-commit/", `c${i}`)));
    for (let i = 0; i < caps.length; i += 4) {
      const staged = await post("/import/caps", { archiveId, caps: caps.slice(i, i + 4).map((c) => c.state) });
      expect(staged.status, await staged.clone().text()).toBe(200);
    }
    for (const c of caps) expect(await errorCode(await cap(c.token).info())).toBe("no_such_cap");
    // Staged again (a re-run): the same answer, nothing live.
    expect((await post("/import/caps", { archiveId, caps: caps.slice(0, 2).map((c) => c.state) })).status).toBe(200);
    const step = (await (await post("/import/commit", { archiveId })).json()) as { done: boolean };
    expect(step.done).toBe(false);
    // The CLI is gone: the alarm finishes the commit.
    expect(await runDurableObjectAlarm(rootRegistryStub(env))).toBe(true);
    expect(await get("/state")).toMatchObject({ open: null, committing: false });
    for (const c of caps) expect((await cap(c.token).info()).status).toBe(200);
  });

  it("refuses tampered caps, a cap that is live already, and staging once the commit began", async () => {
    const archiveId = await begin();
    const good = await archivedCap("ei-tamper/", "good");
    const wrongId = { ...good.state, record: { ...good.state.record, id: "aaaaaaaaaaaaaaaa" } };
    expect(await errorCode(await post("/import/caps", { archiveId, caps: [wrongId] }))).toBe("bad_request");
    const badRoot = { ...good.state, record: { ...good.state.record, root: ["../x/"] } };
    expect(await errorCode(await post("/import/caps", { archiveId, caps: [badRoot] }))).toBe("bad_request");
    const tooMany = Array.from({ length: 101 }, () => good.state);
    expect(await errorCode(await post("/import/caps", { archiveId, caps: tooMany }))).toBe("bad_request");
    expect((await post("/import/caps", { archiveId, caps: [good.state] })).status).toBe(200);
    await finish(archiveId);
    expect((await cap(good.token).info()).status).toBe(200);
    const again = await begin();
    expect(await errorCode(await post("/import/caps", { archiveId: again, caps: [good.state] }))).toBe("conflict");
    expect(await errorCode(await post("/import/caps", { archiveId: "f".repeat(32), caps: [] }))).toBe("conflict");
    await finish(again);
  });

  it("gives up an import before its commit: nothing of it becomes live, and another may begin", async () => {
    const archiveId = await begin();
    const staged = await archivedCap("ei-abort/", "staged");
    expect((await post("/import/caps", { archiveId, caps: [staged.state] })).status).toBe(200);
    for (;;) {
      const res = await post("/import/abort", { archiveId });
      expect(res.status).toBe(200);
      if (((await res.json()) as { done: boolean }).done) break;
    }
    expect(await get("/state")).toMatchObject({ open: null, committing: false });
    expect(await errorCode(await post("/import/commit", { archiveId }))).toBe("conflict");
    expect(await errorCode(await cap(staged.token).info())).toBe("no_such_cap");
    await finish(await begin());
    expect(await errorCode(await cap(staged.token).info())).toBe("no_such_cap");
  });

  it("refuses a key fingerprint that is not the vault's, and a second import while one is open", async () => {
    const res = await post("/import/begin", { archiveId: "a".repeat(32), keyFingerprint: "0".repeat(32), merge: true });
    expect(await errorCode(res)).toBe("conflict");
    const open = await begin();
    const fingerprint = ((await get("/state")) as { keyFingerprint: string }).keyFingerprint;
    const other = await post("/import/begin", { archiveId: "b".repeat(32), keyFingerprint: fingerprint, merge: true });
    expect(await errorCode(other)).toBe("conflict");
    await finish(open);
  });
});

describe("the merge rule", () => {
  it("a vault with roots is refused without --merge; with it, the import adds what does not collide and refuses what does", async () => {
    const existing = await mintRoot(`ei-merge-${crypto.randomUUID()}/`);
    const fingerprint = ((await get("/state")) as { keyFingerprint: string }).keyFingerprint;
    const plain = await post("/import/begin", { archiveId: "c".repeat(32), keyFingerprint: fingerprint, merge: false });
    expect(await errorCode(plain)).toBe("conflict");
    expect(await get("/state")).toMatchObject({ open: null });
    const archiveId = await begin(true);
    // A cap the vault already has (its key live here) is a collision: refused, and the existing cap untouched.
    const { key, id } = await digestToken(existing.token);
    const clash = await archivedCap("ei-merge-clash/", "clash");
    const collided = { ...clash.state, record: { ...clash.state.record, key, id } };
    expect(await errorCode(await post("/import/caps", { archiveId, caps: [collided] }))).toBe("conflict");
    // A cap that collides with nothing is added beside the vault's own.
    const added = await archivedCap("ei-merge-added/", "added");
    expect((await post("/import/caps", { archiveId, caps: [added.state] })).status).toBe(200);
    await finish(archiveId);
    expect((await cap(added.token).info()).status).toBe(200);
    const info = (await (await cap(existing.token).info()).json()) as { label: unknown; rights: string[] };
    expect(info.rights).toEqual(existing.rights);
  });
});
