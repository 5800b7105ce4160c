/**
 * An import writes what every write would, or nothing: a file's content type
 * is judged as a cap's write judges it, and a journal row's text is bounded,
 * so no archive, however edited, leaves a file or a row that fails later (a
 * CR in a type stored on R2 failed every read of the file, and every later
 * export, with a 503; a 300 KB setting name failed the SQLite write; a quota
 * rule of another shape made every call to the imported cap a 503). From
 * the red-team pass of issue 33.
 */

import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { archivedCap, auth, begin, finish, post } from "./archive-admin.ts";
import { call, cap, errorCode } from "./vault.ts";

/** Under an import call's 512 KiB of JSON, far over any text a row holds (4,096). */
const HUGE = 300_000;

describe("import pages judged like every write", () => {
  const putFile = (archiveId: string, path: string, contentType: string) =>
    call(
      "PUT",
      `/admin/import/file?${new URLSearchParams({ archiveId, backend: "r2", prefix: "ij/", path, contentType })}`,
      { headers: { ...auth, "content-length": "5" }, body: "hello" },
    );

  it("PUT /admin/import/file refuses a content type no write may store, and stores nothing", async () => {
    const archiveId = await begin();
    for (const [name, type] of [
      ["crlf.txt", "text/html\r\nx-injected: 1"],
      ["nul.txt", "text/plain\u0000"],
      ["long.txt", `text/${"x".repeat(2000)}`],
    ] as const) {
      const res = await putFile(archiveId, name, type);
      expect(await errorCode(res), name).toBe("bad_request");
      expect(await env.BUCKET.head(`ij/${name}`)).toBeNull();
    }
    const fine = await putFile(archiveId, "fine.txt", "text/plain; charset=utf-8");
    expect(fine.status).toBe(200);
    const read = await call(
      "GET",
      `/admin/export/file?${new URLSearchParams({ backend: "r2", prefix: "ij/", path: "fine.txt" })}`,
      { headers: auth },
    );
    expect(read.status).toBe(200);
    expect(read.headers.get("capvault-content-type")).toBe("text/plain; charset=utf-8");
    expect((await post("/import/abort", { archiveId })).status).toBe(200);
  });

  it("POST /admin/import/journal refuses a row of huge text with a 400, and writes none of the page", async () => {
    const archiveId = await begin();
    const version = (path: string) => ({
      id: 1,
      path,
      op: "created",
      at: 1,
      size: 1,
      sha256: null,
      content_type: null,
      actor: "a",
      blob: null,
    });
    const pages: [string, Record<string, unknown>[]][] = [
      ["journal_settings", [{ name: "n".repeat(HUGE), value: "v" }]],
      ["journal_settings", [{ name: "keepDays", value: "v".repeat(HUGE) }]],
      ["versions", [version("fine.md"), version("p".repeat(HUGE))]],
      ["quota_files", [{ path: "p".repeat(HUGE), size: 1, blob: null }]],
    ];
    for (const [table, rows] of pages) {
      const res = await post("/import/journal", { archiveId, backend: "r2", prefix: "ij/", table, rows });
      expect(await errorCode(res), table).toBe("bad_request");
    }
    const exported = await call(
      "GET",
      `/admin/export/journal?${new URLSearchParams({ backend: "r2", prefix: "ij/", table: "versions" })}`,
      { headers: auth },
    );
    expect(((await exported.json()) as { rows: unknown[] }).rows).toEqual([]);
    expect((await post("/import/abort", { archiveId })).status).toBe(200);
  });
});

describe("an imported cap whose record holds what no mint writes", () => {
  const records: [string, Record<string, unknown>][] = [
    ["quotas [null]", { quotas: [null] }],
    ["quotas of strings", { quotas: [{ prefix: 7, maxBytes: "lots", maxFiles: {} }] }],
    ["retention of strings", { retention: { keepVersions: "all", keepDays: -5 } }],
    ["retention empty", { retention: {} }],
    ["depth huge", { depth: Number.MAX_SAFE_INTEGER }],
    ["holder jkt empty", { holder: { jkt: "" } }],
  ];
  it.each(records)("%s: refused at staging, or served without a 5xx", async (name, extra) => {
    const archiveId = await begin();
    const { token, state } = await archivedCap(`ij-odd-${crypto.randomUUID()}/`, name);
    const record = { ...state.record, rights: ["read", "write", "delete", "list", "subdir"], ...extra };
    const staged = await post("/import/caps", { archiveId, caps: [{ ...state, record }] });
    if (staged.status === 400) {
      expect((await post("/import/abort", { archiveId })).status).toBe(200);
      expect(await errorCode(await cap(token).info())).toBe("no_such_cap");
      return;
    }
    expect(staged.status, await staged.clone().text()).toBe(200);
    await finish(archiveId);
    const base = `/object/${token}`;
    const answers: [string, Response][] = [
      ["info", await cap(token).info()],
      ["write", await call("PUT", `${base}/file?path=a.txt`, { body: "one" })],
      ["write again", await call("PUT", `${base}/file?path=a.txt`, { body: "two" })],
      ["read", await call("GET", `${base}/file?path=a.txt`)],
      ["list", await call("GET", `${base}/list?path=`)],
      ["versions", await call("GET", `${base}/versions?path=a.txt`)],
      ["subdir", await call("POST", `${base}/subdir`, { json: { path: "", rights: ["read"], maxBytes: 10 } })],
      ["delete", await call("DELETE", `${base}/file?path=a.txt`)],
    ];
    for (const [what, res] of answers) expect(`${what} ${res.status < 500}`, await res.text()).toBe(`${what} true`);
  });

  it("a record as a mint writes it, quotas and retention included, is staged and served", async () => {
    const archiveId = await begin();
    const { token, state } = await archivedCap(`ij-fine-${crypto.randomUUID()}/`, "fine");
    const record = {
      ...state.record,
      rights: ["read", "write", "list"],
      quotas: [{ prefix: "", maxBytes: 100, maxFiles: 3 }],
      retention: { keepVersions: 2, keepDays: 1 },
    };
    expect((await post("/import/caps", { archiveId, caps: [{ ...state, record }] })).status).toBe(200);
    await finish(archiveId);
    expect((await call("PUT", `/object/${token}/file?path=a.txt`, { body: "one" })).status).toBe(201);
    expect(await errorCode(await call("PUT", `/object/${token}/file?path=b.txt`, { body: "x".repeat(200) }))).toBe(
      "quota_exceeded",
    );
  });
});
