/**
 * Where superseded bytes live. Each kept version is one blob, named by 128
 * random bits in hex, stored where no cap can name it and no listing shows
 * it: every name starting `.capvault-` is refused by the path parser and
 * skipped by listings (shared/rel-path.ts), and an admin's prefix is parsed
 * the same way, so no root can be minted inside either place.
 *
 * - R2: the key `.capvault-versions/<blob>`, outside every root's prefix (and,
 *   for a root over the whole bucket, a reserved name within it).
 * - Disk: `<base>/.capvault-versions/<blob>`, a hard link to the inode the
 *   write renamed into place, so the live file stays a plain file and keeping
 *   a version costs no copy.
 */
export const VERSIONS_DIR_NAME = ".capvault-versions";
export const R2_VERSIONS_PREFIX = `${VERSIONS_DIR_NAME}/`;

/**
 * R2 versions of at most this many bytes are kept in the journal's row, not
 * as a blob. Only an empty file is: redaction must destroy bytes for good,
 * and a row's bytes do not go with its `DELETE`. SQLite leaves them in the
 * WAL and in free pages (`PRAGMA secure_delete` is refused in a Durable
 * Object), and Cloudflare's point-in-time recovery keeps 30 days of them; a
 * redacted 40-byte API key was found in the journal's WAL this way. The R2
 * delete of a blob is what redaction can promise. The mechanism stays for
 * the empty version, which has nothing to destroy.
 */
export const INLINE_VERSION_MAX = 0;

const BLOB_NAME = /^[0-9a-f]{32}$/;

/** Whether `name` is a blob name as {@link newBlobName} makes them: checked again at every storage boundary. */
export function isBlobName(name: unknown): name is string {
  return typeof name === "string" && BLOB_NAME.test(name);
}

export function newBlobName(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
}
