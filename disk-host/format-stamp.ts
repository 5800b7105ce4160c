/**
 * The disk backend's state format (shared/state-format.ts): one small file,
 * `<base>/.capvault-format`, read when the host starts. Everything the host
 * keeps in the folder (sidecars, version links, temp names: docs/state-format.md)
 * is of that format. The name is reserved (`.capvault-*` is refused by the
 * path parser and never listed), so no cap can read or plant it.
 *
 * - absent: a folder of format 1 (or a new one); the host stamps it with its
 *   own format, atomically (temp, fsync, rename, folder fsync), before serving;
 * - this build's format: served;
 * - newer, or unreadable: every call is refused with a message naming both
 *   formats, and nothing in the folder is touched (not even stale temps).
 */
import { randomBytes } from "node:crypto";
import { closeSync, constants, fsyncSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import { refuse } from "../shared/refusals.ts";
import { ok, type Result } from "../shared/result.ts";
import { FORMAT_FILE_NAME, formatStamp, parseFormatStamp, STATE_FORMAT } from "../shared/state-format.ts";
import { errnoOf } from "./fs-errors.ts";
import { TEMP_PREFIX } from "./meta-store.ts";

const MAX_STAMP_BYTES = 4096;

/** Checks (and on a folder without one, writes) the base folder's format stamp. Synchronous: run once at start. */
export function checkDiskFormat(baseDir: string, build = STATE_FORMAT): Result<{ from: number | null }> {
  const file = join(baseDir, FORMAT_FILE_NAME);
  let text: string;
  try {
    // Never through a link: a stamp planted as a link to some other file is refused as unreadable.
    const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      text = readFileSync(fd, "utf8").slice(0, MAX_STAMP_BYTES);
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    if (errnoOf(err) !== "ENOENT") return refuse("stateFormatUnreadable");
    writeStamp(baseDir, file);
    return ok({ from: null });
  }
  const stored = parseFormatStamp(text);
  if (stored === null) return refuse("stateFormatUnreadable");
  if (stored > build) return refuse("stateFormatNewer", { stored, build });
  // Older stamps would be migrated here, step by step, the stamp written last.
  if (stored < build) writeStamp(baseDir, file);
  return ok({ from: stored });
}

function writeStamp(baseDir: string, file: string): void {
  const temp = join(baseDir, TEMP_PREFIX + randomBytes(12).toString("hex"));
  const fd = openSync(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try {
    writeSync(fd, `${JSON.stringify(formatStamp())}\n`);
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    unlinkSync(temp);
    throw err;
  }
  closeSync(fd);
  // The rename replaces whatever is at the name (a planted link included), never writes through it.
  renameSync(temp, file);
  const dir = openSync(baseDir, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
}
