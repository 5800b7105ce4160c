/**
 * An import writes what every write would, or nothing: a file's content type
 * is judged as a cap's write judges it, and a journal row's text is bounded,
 * so no archive, however edited, leaves a file or a row that fails later (a
 * CR in a type stored on R2 failed every read of the file, and every later
 * export, with a 503; a 300 KB setting name failed the SQLite write). From
 * the red-team pass of issue 33.
 */

import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { auth, begin, post } from "./archive-admin.ts";
import { call, errorCode } from "./vault.ts";

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
