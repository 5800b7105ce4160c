/**
 * The declared format of everything capvault keeps (docs/state-format.md).
 *
 * Why a number: a cap minted yesterday must work tomorrow, and state outlives
 * the code that wrote it. Each store records the format it was last migrated
 * to; a build migrates older state forward where it lives (each Durable
 * Object when it wakes, the disk host when it starts: objects cannot be
 * listed, so nothing else can reach them), and refuses state of a newer
 * format without writing to it, naming both numbers, rather than guess at a
 * layout it has never seen.
 *
 * The formats:
 * - 0: the first release (commit 5055285): tokens of 32 unsigned characters.
 *   Its caps are re-issued by the admin (docs/upgrading.md), never accepted.
 * - 1: signed 48-character tokens, up to 0.1.0's last build. No store said
 *   its format; tables and optional fields were added over time, each read
 *   tolerantly, so every such store is migrated as format 1.
 * - 2: release 0.2.0. Every store carries its format; the lazy conversions
 *   format 1 needed (the audit table's split, the children's count and
 *   ordered index, the journals' quota tables) are migrations.
 */

/** The format this build writes, and the newest it reads. */
export const STATE_FORMAT = 2;

/** This build's release (semantic versioning; CHANGELOG.md). */
export const RELEASE = "0.2.0";

/** The stores that carry a format of their own. */
export type StoreKind = "cap" | "registry" | "journal" | "oauth" | "disk" | "r2";

/** The format stamp of the disk backend and of the R2 layout: a file (`<base>/…`) and an object at the bucket's top. */
export const FORMAT_FILE_NAME = ".capvault-format";

/** What the disk's and R2's format stamp holds. */
export interface FormatStamp {
  format: number;
  release: string;
}

export function formatStamp(): FormatStamp {
  return { format: STATE_FORMAT, release: RELEASE };
}

/**
 * The format a stamp's text declares, or `null` when it is no stamp this
 * code can read (a stamp written by a hand or by a newer build whose shape
 * changed still has a whole-number `format`, so that is all it checks).
 */
export function parseFormatStamp(text: string): number | null {
  try {
    const value = JSON.parse(text) as unknown;
    const format = (value as { format?: unknown } | null)?.format;
    return typeof format === "number" && Number.isSafeInteger(format) && format >= 0 ? format : null;
  } catch {
    return null;
  }
}
