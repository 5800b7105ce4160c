import type { Version, WatchEvent } from "../clients/typescript/index.ts";
import { formatBytes, formatTable, formatTime } from "./human-format.ts";
import { terminalSafe } from "./terminal-safe.ts";

/** Every field is the vault's JSON, whatever its declared type: made text, then escaped. */
const safe = (value: unknown): string => terminalSafe(String(value));

/** Hex digits of a SHA-256 shown in tables: enough to tell versions apart. */
const SHA_SHORT = 12;

/**
 * Human output of versions and changes. Ids, actors and hashes come from the
 * vault and go through terminalSafe like names do: a hostile vault (or proxy)
 * must not drive the terminal through them either.
 */
export function formatVersions(path: string, versions: Version[]): string {
  if (versions.length === 0) return `no versions of ${safe(path)}\n`;
  const rows = versions.map((v) => [
    safe(v.id),
    safe(v.operation),
    formatTime(v.at),
    v.size === null ? "-" : formatBytes(v.size),
    v.sha256 === null ? "-" : safe(v.sha256.slice(0, SHA_SHORT)),
    safe(v.actor),
    v.redacted ? "redacted" : "",
  ]);
  return formatTable([["ID", "OPERATION", "WHEN", "SIZE", "SHA256", "ACTOR", ""], ...rows]);
}

/** One line per change, as `watch` prints it: version, operation, path, size. */
export function formatChange(change: WatchEvent): string {
  const size = change.size === null ? "" : ` (${formatBytes(change.size)})`;
  return `${safe(change.version)} ${safe(change.operation)} ${safe(change.path)}${size}\n`;
}
