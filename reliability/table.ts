import type { FindingKind, Findings } from "./findings.ts";

/** One line of the reliability table. */
export interface Row {
  check: string;
  backend: string;
  cases?: number;
  faults?: number;
  requests?: number;
  /** Requests in flight at once that the check actually held (peak). */
  concurrency?: number;
  findings: Findings;
  /** What the check saw, printed under the table (e.g. how many files a kill left old or new). */
  notes?: string[];
}

const COLUMNS = [
  "check",
  "backend",
  "cases",
  "faults",
  "requests",
  "concurrency",
  "5xx",
  "lost",
  "leaks",
  "other",
  "drops",
] as const;

export function tableText(rows: readonly Row[]): string {
  const cells = rows.map((r) => [
    r.check,
    r.backend,
    num(r.cases),
    num(r.faults),
    num(r.requests),
    num(r.concurrency),
    String(r.findings.count("5xx")),
    String(r.findings.count("lost")),
    String(r.findings.count("leak")),
    String(r.findings.count("other")),
    String(r.findings.count("drop")),
  ]);
  const total = (pick: (r: Row) => number | undefined) => rows.reduce((sum, r) => sum + (pick(r) ?? 0), 0);
  const count = (kind: FindingKind) => String(rows.reduce((sum, r) => sum + r.findings.count(kind), 0));
  cells.push([
    "total",
    "",
    num(total((r) => r.cases)),
    num(total((r) => r.faults)),
    num(total((r) => r.requests)),
    "",
    count("5xx"),
    count("lost"),
    count("leak"),
    count("other"),
    count("drop"),
  ]);
  const widths = COLUMNS.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i]!.length)));
  const line = (row: readonly string[]) =>
    `| ${row.map((cell, i) => (i < 2 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join(" | ")} |`;
  const rule = `|${widths.map((w, i) => (i < 2 ? `:${"-".repeat(w + 1)}` : `${"-".repeat(w + 1)}:`)).join("|")}|`;
  return [line(COLUMNS), rule, ...cells.slice(0, -1).map(line), line(cells.at(-1)!)].join("\n");
}

function num(n: number | undefined): string {
  return n === undefined ? "" : n.toLocaleString("en-US");
}

/** A non-zero count in any column that must be zero fails the run (drops are reported, not failed). */
export function failed(rows: readonly Row[]): boolean {
  return rows.some((r) => r.findings.all.some((f) => f.kind !== "drop"));
}
