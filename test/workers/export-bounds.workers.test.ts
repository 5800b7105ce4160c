/**
 * The paged routes of vault export and import (docs/export-import.md) at their
 * bound and one past it: a page of exactly N answers N and then nothing, N + 1
 * answers N and then the one left, with no entry lost or repeated at the cut;
 * an import call over its per-call maximum is refused and writes nothing.
 * The journal's page: export-import.workers.test.ts.
 */

import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { archivedCap, begin, finish, get, post } from "./archive-admin.ts";
import { cap, errorCode, mintRoot } from "./vault.ts";

// The bounds as docs/export-import.md states them, written out, not imported: a changed constant fails here.
const STAGE_PAGE = 100;
const STAGE_CAPS = 4;
const OAUTH_PAGE = 200;
const FILES_PAGE = 1000;
const MAX_CHILDREN = 1000;
const MAX_AUDIT = 1100;
const fresh = (name: string) => `eb-${name}-${crypto.randomUUID()}/`;

/** `n` calls of `each`, 50 at a time. */
async function inBatches<T>(n: number, each: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let from = 0; from < n; from += 50)
    out.push(...(await Promise.all(Array.from({ length: Math.min(50, n - from) }, (_, i) => each(from + i)))));
  return out;
}

/** Every page of an export route, following its cursor: each page's items, in order. */
async function pagesOf<T>(route: string, field: string, params: Record<string, string> = {}): Promise<T[][]> {
  const pages: T[][] = [];
  let cursor: string | null = null;
  do {
    const query = new URLSearchParams(params);
    if (cursor) query.set("cursor", cursor);
    const page = await get(`${route}?${query}`);
    pages.push(page[field] as T[]);
    cursor = page.cursor as string | null;
    expect(pages.length).toBeLessThan(100);
  } while (cursor);
  return pages;
}

/** The page sizes of a walk whose items number `total`, `bound` a page (a full last page answers an empty one after it). */
const sizes = (total: number, bound: number) => [
  ...Array.from({ length: Math.floor(total / bound) }, () => bound),
  total % bound,
];

/** A registry root as an archive carries it. */
const archivedRoot = async (prefix: string) => {
  const { record } = (await archivedCap(prefix, "root")).state;
  return {
    id: record.id,
    key: record.key,
    label: null,
    backend: "r2",
    prefix,
    rights: ["read"],
    createdAt: 1,
    expiresAt: null,
  };
};

describe("export pages at the bound", () => {
  it(`roots: ${STAGE_PAGE} a page, a walk of whole pages and one past it`, async () => {
    const before = (await pagesOf<{ id: string }>("/export/roots", "roots")).flat().length;
    // Enough roots that the registry holds whole pages exactly.
    const more = STAGE_PAGE - (before % STAGE_PAGE);
    const prefix = fresh("roots");
    const minted = await inBatches(more, (i) => mintRoot(`${prefix}r${i}/`));
    const exact = await pagesOf<{ id: string }>("/export/roots", "roots");
    expect(exact.map((p) => p.length)).toEqual(sizes(before + more, STAGE_PAGE));
    const ids = exact.flat().map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual([...ids].sort());
    for (const m of minted) expect(ids).toContain(m.id);

    const last = await mintRoot(`${prefix}last/`);
    const past = await pagesOf<{ id: string }>("/export/roots", "roots");
    expect(past.map((p) => p.length)).toEqual(sizes(before + more + 1, STAGE_PAGE));
    const pastIds = past.flat().map((r) => r.id);
    expect(new Set(pastIds).size).toBe(pastIds.length);
    expect(pastIds.sort()).toEqual([...ids, last.id].sort());
  });

  it(`files: at most ${FILES_PAGE} a page, none lost or repeated at a cut, and one file past a whole walk`, async () => {
    const prefix = fresh("files");
    const name = (i: number) => `f${String(i).padStart(4, "0")}.txt`;
    const names = (n: number) => Array.from({ length: n }, (_, i) => name(i));
    // Straight into the bucket (the listing reads storage): a thousand writes through a cap take over 30 s.
    await inBatches(FILES_PAGE, (i) => env.BUCKET.put(prefix + name(i), `${i}`));
    const params = { backend: "r2", prefix };
    // Miniflare's R2 answers 100 keys a list when metadata is asked for, and a page makes at most
    // TREE_LIST_CALLS (5) lists, so a page here holds 500: short pages with a cursor, never more than the bound.
    const exact = await pagesOf<{ path: string }>("/export/files", "files", params);
    for (const page of exact) expect(page.length).toBeLessThanOrEqual(FILES_PAGE);
    expect(exact.slice(0, -1).every((p) => p.length > 0)).toBe(true);
    expect(exact.flat().map((f) => f.path)).toEqual(names(FILES_PAGE));

    await env.BUCKET.put(prefix + name(FILES_PAGE), "last");
    const past = await pagesOf<{ path: string }>("/export/files", "files", params);
    for (const page of past) expect(page.length).toBeLessThanOrEqual(FILES_PAGE);
    expect(past.flat().map((f) => f.path)).toEqual(names(FILES_PAGE + 1));
    expect(past.at(-1)!.map((f) => f.path)).toEqual([name(FILES_PAGE)]);
  });

  it(`oauth: ${OAUTH_PAGE} entries a page and one past; an import of ${OAUTH_PAGE + 1} is refused`, async () => {
    const before = (await pagesOf<[string, unknown]>("/export/oauth", "entries")).flat();
    const archiveId = await begin();
    const tag = crypto.randomUUID();
    const entry = (i: number): [string, unknown] => [`client:${tag}-${String(i).padStart(4, "0")}`, { n: i }];
    const tooMany = Array.from({ length: OAUTH_PAGE + 1 }, (_, i) => entry(i));
    expect(await errorCode(await post("/import/oauth", { archiveId, entries: tooMany }))).toBe("bad_request");
    expect((await pagesOf<[string, unknown]>("/export/oauth", "entries")).flat()).toEqual(before);

    const page = tooMany.slice(0, OAUTH_PAGE);
    expect((await post("/import/oauth", { archiveId, entries: page })).status).toBe(200);
    const exact = await pagesOf<[string, unknown]>("/export/oauth", "entries");
    const keys = exact.flat().map(([k]) => k);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys.filter((k) => k.includes(tag))).toEqual(page.map(([k]) => k));
    // An empty registry before (this file's own storage): the pages are exactly the bound's.
    if (before.length === 0) expect(exact.map((p) => p.length)).toEqual([OAUTH_PAGE, 0]);

    expect((await post("/import/oauth", { archiveId, entries: [tooMany[OAUTH_PAGE]] })).status).toBe(200);
    const past = await pagesOf<[string, unknown]>("/export/oauth", "entries");
    const pastKeys = past.flat().map(([k]) => k);
    expect(new Set(pastKeys).size).toBe(pastKeys.length);
    expect(pastKeys.filter((k) => k.includes(tag))).toEqual(tooMany.map(([k]) => k));
    if (before.length === 0) expect(past.map((p) => p.length)).toEqual([OAUTH_PAGE, 1]);
    await finish(archiveId);
  });
});

describe("import calls at their maximum", () => {
  it(`caps: ${STAGE_CAPS} staged in one call; ${STAGE_CAPS + 1} refused, none of them staged`, async () => {
    const archiveId = await begin();
    const prefix = fresh("caps");
    const refused = await inBatches(STAGE_CAPS + 1, (i) => archivedCap(prefix, `x${i}`));
    const staged = await inBatches(STAGE_CAPS, (i) => archivedCap(prefix, `c${i}`));
    const res = await post("/import/caps", { archiveId, caps: refused.map((c) => c.state) });
    expect(await errorCode(res)).toBe("bad_request");
    const ok = await post("/import/caps", { archiveId, caps: staged.map((c) => c.state) });
    expect(ok.status, await ok.clone().text()).toBe(200);
    expect(await ok.json()).toBe(STAGE_CAPS);
    await finish(archiveId);
    await inBatches(STAGE_CAPS, async (i) => expect((await cap(staged[i]!.token).info()).status).toBe(200));
    await inBatches(STAGE_CAPS + 1, async (i) =>
      expect(await errorCode(await cap(refused[i]!.token).info())).toBe("no_such_cap"),
    );
  });

  it("a cap too large for one call: staged, then the rest by pages; at the commit it holds all of it, in order", async () => {
    const archiveId = await begin();
    const prefix = fresh("paged");
    const whole = (await archivedCap(prefix, "paged")).state;
    const { key } = whole.record;
    const children = await inBatches(MAX_CHILDREN, async (i) => {
      const { record } = (await archivedCap(`${prefix}c${i}/`, `child ${i}`)).state;
      return {
        id: record.id,
        key: record.key,
        label: record.label,
        path: `c${i}`,
        rights: ["read"],
        createdAt: 10 + i,
        expiresAt: null,
      };
    });
    const audit = Array.from({ length: MAX_AUDIT }, (_, i) => ({
      at: 1000 + i,
      op: "write",
      path: `f${i}`,
      outcome: i % 11 === 0 ? "not_found" : "ok",
      child: null,
      count: 1,
    }));
    const staged = await post("/import/caps", {
      archiveId,
      caps: [{ ...whole, children: children.slice(0, 400), audit: audit.slice(0, 500) }],
    });
    expect(staged.status, await staged.clone().text()).toBe(200);
    const page = (more: Record<string, unknown>, k = key) => post("/import/cap-page", { archiveId, key: k, ...more });

    // Refused, each changing nothing: one child past the bound, one audit line past it, an empty page,
    // and a cap this import did not stage.
    const extra = { ...children[0]!, id: "", key: "" };
    const { record: other } = (await archivedCap(prefix, "other")).state;
    Object.assign(extra, { id: other.id, key: other.key });
    const refused = [
      await page({ children: [...children.slice(400), extra], audit: [] }),
      await page({ children: [], audit: [...audit.slice(500), audit[0]] }),
      await page({ children: [], audit: [] }),
      await page({ children: children.slice(400), audit: [] }, other.key),
    ];
    expect(await Promise.all(refused.map(errorCode))).toEqual([
      "bad_request",
      "bad_request",
      "bad_request",
      "conflict",
    ]);

    expect((await page({ children: children.slice(400, 700), audit: audit.slice(500, 900) })).status).toBe(200);
    const last = await page({ children: children.slice(700), audit: audit.slice(900) });
    expect(await last.json()).toEqual({ children: MAX_CHILDREN, audit: MAX_AUDIT });
    await finish(archiveId);

    const held = (await get(`/export/cap/${key}`)) as { children: unknown[]; audit: unknown[] };
    expect(new Set(held.children.map((c) => (c as { id: string }).id))).toEqual(new Set(children.map((c) => c.id)));
    expect(held.audit).toEqual(audit);
  });

  it(`roots: ${STAGE_PAGE} staged in one call; ${STAGE_PAGE + 1} refused, none of them staged`, async () => {
    const archiveId = await begin();
    const prefix = fresh("import-roots");
    const refused = await inBatches(STAGE_PAGE + 1, (i) => archivedRoot(`${prefix}x${i}/`));
    const staged = await inBatches(STAGE_PAGE, (i) => archivedRoot(`${prefix}r${i}/`));
    expect(await errorCode(await post("/import/roots", { archiveId, roots: refused }))).toBe("bad_request");
    const ok = await post("/import/roots", { archiveId, roots: staged });
    expect(ok.status, await ok.clone().text()).toBe(200);
    expect(await ok.json()).toBe(STAGE_PAGE);
    await finish(archiveId);
    const ids = new Set((await pagesOf<{ id: string }>("/export/roots", "roots")).flat().map((r) => r.id));
    for (const r of staged) expect(ids.has(r.id)).toBe(true);
    for (const r of refused) expect(ids.has(r.id)).toBe(false);
  });
});
