/**
 * `npm run bench` keeps working: the whole bench at its tiny size, against a
 * real vault and real floors, yields every row with finite figures. It says
 * nothing about speed (that is the benchmark's job, not a test's).
 */
import { describe, expect, it } from "vitest";
import { SIZES } from "./bench-context.ts";
import { runBench } from "./run-bench.ts";
import { SECTIONS } from "./sections.ts";
import { formatTable } from "./table.ts";

/** Every row the bench prints, by section. */
const EXPECTED: Record<string, RegExp[]> = {
  entry: [
    /^bare workerd serving a constant p50$/,
    /^a Miniflare worker serving a constant p50$/,
    /^the vault's GET \/ p50$/,
    /^a cap's info \(worker \+ the cap's object\) p50$/,
  ],
  r2: [
    /^R2 read 1 KiB p50$/,
    /^R2 write 1 KiB p50$/,
    /^R2 read 1 KiB, 16 in flight$/,
    /^R2 read 1 KiB p50, fetch client$/,
    /^R2 write 1 KiB p50 vs the same commits$/,
    /^R2 write 1 KiB p50 vs the same checks and commits$/,
    /^R2 write 1 KiB p50 vs the same checks, version put and commits$/,
    /^R2 read 1 KiB p50 vs one object hop$/,
    /^R2 read 1 KiB, 16 in flight vs one object hop$/,
  ],
  disk: [
    /^disk read 1 KiB p50$/,
    /^disk write 1 KiB p50$/,
    /^disk read 1 KiB, 16 in flight$/,
    /^disk write 1 KiB p50 vs durable write$/,
    /^disk write 1 KiB p50 vs the same commits$/,
    /^disk write 1 KiB p50 vs worker, object hop, socket, durable write and commits$/,
    /^disk read 1 KiB p50 vs worker, object hop and socket$/,
    /^disk read 1 KiB, 16 in flight vs worker, object hop and socket$/,
  ],
  mcp: [
    /^MCP read_file 1 KiB, 16 in flight$/,
    /^MCP read_file 1 KiB through the stdio bridge, 16 in flight$/,
    /^MCP read_file 1 KiB p50$/,
    /^MCP read_file 1 KiB p50 vs the cap's GET \/file$/,
    /^MCP read_file 1 KiB through the stdio bridge vs the cap's HTTP \/mcp, 16 in flight$/,
  ],
  large: [
    /^R2 \d+ MiB up$/,
    /^R2 \d+ MiB down$/,
    /^R2 \d+ MiB up\+down, RSS/,
    /^R2 \d+ MiB up vs floor staging a version/,
    /^R2 \d+ MiB up\+down, RSS growth vs floor staging a version/,
    /^R2 \d+ MiB up\+down, growth of the vault isolate/,
    /^R2 \d+ MiB up\+down, growth of the R2 simulator isolate/,
    /^disk \d+ MiB up$/,
    /^disk \d+ MiB down$/,
    /^disk \d+ MiB up\+down, RSS/,
    /^disk \d+ MiB up\+down, growth of the vault isolate/,
  ],
  depth: [/^depth-\d+ ÷ depth-1 read p50$/],
  clients: [/^\d+ clients, mixed calls \(R2\)$/, /^\d+ clients reading: one hot cap vs a cap each$/],
  rpc: [/^narrow \+ read: RPC pipelined vs two HTTP requests$/],
  holder: [/^bound − unbound read p50$/, /^vault CPU per read, bound vs unbound$/],
  watch: [/^watch: write on one cap → event on another, p50$/, /^watch: write on one cap → event on another, max$/],
  caps: [
    /caps: mint a child cap/,
    /caps: warm read via any cap p50$/,
    /^first request after a restart/,
    /^first read through each cap after a restart p50$/,
  ],
  revocation: [
    /^mint tree of \d+ caps$/,
    /^revoke tree of \d+ caps$/,
    /^check \d+ caps dead$/,
    /^alive after revoke$/,
    /vault CPU while minting$/,
    /vault CPU while revoking$/,
    /vault CPU while checking$/,
  ],
};

describe("npm run bench, tiny size", () => {
  // Two vault starts (one restart) on a shared CI machine: a ceiling for a hung run, not a speed check.
  it("measures every row of every section, each a finite number", { timeout: 300_000 }, async () => {
    const results = await runBench(SIZES.tiny, Object.keys(SECTIONS), () => undefined);
    expect(Object.keys(EXPECTED).sort()).toEqual(Object.keys(SECTIONS).sort());
    for (const [section, patterns] of Object.entries(EXPECTED)) {
      const names = results.rows.filter((r) => r.section === section).map((r) => r.row);
      expect(names.length, section).toBe(patterns.length);
      for (const [i, p] of patterns.entries()) expect(names[i], section).toMatch(p);
    }
    for (const row of results.rows) {
      // A difference between two figures ("bound − unbound") may fall below zero on a tiny, noisy run.
      const difference = row.row.includes(" − ");
      expect(Number.isFinite(row.cap) && (difference || row.cap >= 0), row.row).toBe(true);
      // A floor of 0 (a tiny transfer that grew no memory on the floor's side) has no ratio.
      if (row.floor !== null)
        expect(
          Number.isFinite(row.floor) && (row.floor === 0 ? row.ratio === null : Number.isFinite(row.ratio)),
          row.row,
        ).toBe(true);
      if (row.target !== null) expect(typeof row.met, row.row).toBe("boolean");
    }
    expect(formatTable(results.rows).split("\n")).toHaveLength(results.rows.length + 2);
  });
});
