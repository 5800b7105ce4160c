import type { CapInfo, ChildView, FsCap, ListEntry, Stat, WriteResult } from "../clients/typescript/index.ts";
import { terminalSafe as safe } from "./terminal-safe.ts";

/**
 * Human-readable output. Pure functions from SDK results to text; `--json`
 * bypasses all of this. Every string that came from the vault goes through
 * terminalSafe: names, labels and content types are chosen by whoever wrote
 * them, and must not drive the terminal or fake output lines.
 */

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB"];

/** 1536 → "1.5 KiB"; exact below 1 KiB. */
export function formatBytes(bytes: number): string {
  // A size is the vault's JSON: a hostile vault or proxy could send a string of escape sequences.
  if (typeof bytes !== "number" || !Number.isFinite(bytes)) return safe(String(bytes));
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(1)} ${UNITS[unit]}`;
}

/** ISO 8601 → "2025-01-31 12:00" (UTC); missing → "-". */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return "-";
  const time = Date.parse(iso);
  if (Number.isNaN(time)) return safe(iso);
  return new Date(time).toISOString().slice(0, 16).replace("T", " ");
}

export function formatExpiry(expiresAt: string | null | undefined): string {
  return expiresAt ? formatTime(expiresAt) : "never";
}

/** Aligned `key  value` lines. */
export function formatFields(fields: [string, string][]): string {
  const width = Math.max(...fields.map(([key]) => key.length));
  return fields.map(([key, value]) => `${key.padEnd(width)}  ${value}\n`).join("");
}

/** One listing line: the name, with `/` after folders; `long` adds size and time columns. */
export function formatEntry(entry: ListEntry, long: boolean): string {
  const name = entry.type === "dir" ? `${safe(entry.name)}/` : safe(entry.name);
  if (!long) return `${name}\n`;
  const size = entry.type === "dir" ? "-" : formatBytes(entry.size ?? 0);
  return `${size.padStart(10)}  ${formatTime(entry.modified).padEnd(16)}  ${name}\n`;
}

export function formatInfo(info: CapInfo): string {
  return formatFields([
    ["id", safe(info.id)],
    ["rights", safe(info.rights.join(", ")) || "(none)"],
    ["label", info.label == null ? "-" : safe(info.label)],
    ["created", formatTime(info.createdAt)],
    ["expires", formatExpiry(info.expiresAt)],
    ["parent", info.parent == null ? "- (root cap)" : safe(info.parent)],
  ]);
}

export function formatStat(stat: Stat): string {
  if (stat.type === "dir") return formatFields([["type", "dir"]]);
  return formatFields([
    ["type", "file"],
    ["size", `${stat.size} (${formatBytes(stat.size)})`],
    // A cap without `read` is shown no etag.
    ...(stat.etag === undefined ? [] : [["etag", safe(stat.etag)] as [string, string]]),
    ["modified", formatTime(stat.modified)],
    ["content-type", safe(stat.contentType)],
  ]);
}

export function formatWrite(path: string, result: WriteResult): string {
  return `${result.created ? "created" : "replaced"} ${safe(path)} (${formatBytes(result.size)}, etag ${safe(result.etag)})\n`;
}

/** A table of children; empty → a sentence, so a blank screen never means "broken". */
export function formatChildren(children: ChildView[]): string {
  if (children.length === 0) return "no child caps\n";
  const rows = children.map((c) => [
    safe(c.id),
    safe(c.rights.join(",")),
    formatExpiry(c.expiresAt),
    c.path === "" ? "." : safe(c.path),
    safe(c.label ?? ""),
  ]);
  return formatTable([["ID", "RIGHTS", "EXPIRES", "PATH", "LABEL"], ...rows]);
}

/** Rows (the first a header) in columns two spaces apart, each line without trailing blanks. Cells come escaped. */
export function formatTable(rows: string[][]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((row) => row[i]?.length ?? 0))) ?? [];
  return rows
    .map(
      (row) =>
        `${row
          .map((cell, i) => cell.padEnd(widths[i] ?? 0))
          .join("  ")
          .trimEnd()}\n`,
    )
    .join("");
}

/** The summary printed to stderr after minting; stdout carries only the URL. */
export function formatMinted(what: string, cap: FsCap): string {
  return `${what} ${safe(cap.id ?? "?")}: rights ${safe(cap.rights?.join(",") ?? "?")}, expires ${formatExpiry(cap.expiresAt)}\n`;
}
