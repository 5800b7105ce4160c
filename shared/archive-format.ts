/**
 * The vault archive's own format (docs/export-import.md). Every archive's
 * header also names the state format and release of the vault it came from
 * (shared/state-format.ts); an archive of a newer state format than this
 * build's is refused.
 */
export const ARCHIVE_FORMAT = 1;

export { RELEASE, STATE_FORMAT } from "./state-format.ts";
