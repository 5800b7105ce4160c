import type { RefusalEntry } from "./refusal-entry.ts";

/** Paths, files, folders, line windows, uploads and storage: part of the one table in refusals.ts. */
export const FILE_REFUSALS = {
  // -- the path parser
  invalidPath: { code: "invalid_path", message: "invalid path" },
  absolutePath: { code: "absolute_path", message: "absolute paths forbidden" },
  pathEscapes: { code: "path_escapes", message: "path escapes" },
  backslash: { code: "invalid_path", message: "backslashes are not allowed in paths" },
  controlCharacter: { code: "invalid_path", message: "control characters are not allowed in paths" },
  unpairedSurrogate: { code: "invalid_path", message: "unpaired surrogates are not allowed in paths" },
  emptySegment: { code: "invalid_path", message: "empty and '.' segments are not allowed" },
  segmentTooLong: { code: "invalid_path", message: "a path segment is over 255 bytes" },
  reservedName: { code: "invalid_path", message: "names starting with .capvault- are reserved" },
  pathTooLong: { code: "invalid_path", message: "path too long" },
  prefixTooLong: { code: "invalid_path", message: "prefix too long" },
  needsFileName: { code: "invalid_path", message: "a file operation needs a file name" },
  outsideRoot: { code: "outside_root", message: "resolved outside root" },
  // -- what storage holds
  notFound: { code: "not_found", message: "nothing at that path" },
  isDirectory: { code: "conflict", message: "that path is a directory" },
  isFile: { code: "conflict", message: "that path is a file" },
  parentIsFile: { code: "conflict", message: "a parent of that path is a file" },
  folderNotEmpty: { code: "conflict", message: "that folder is not empty" },
  needsFolderName: { code: "invalid_path", message: "a folder operation needs a folder name" },
  fileDirectoryClash: { code: "conflict", message: "a file is where a directory is needed, or the reverse" },
  cannotMoveDirectory: { code: "conflict", message: "cannot move a directory" },
  destinationParentIsFile: { code: "conflict", message: "a parent of the destination is a file" },
  destinationIsDirectory: { code: "conflict", message: "the destination is a directory" },
  destinationExists: { code: "conflict", message: "the destination exists" },
  // -- whole folders (worker/folder-ops.ts): refused before anything changes
  folderTooLarge: {
    code: "too_large",
    message: (p: { limit: number }) =>
      `a folder deleted or moved in one request holds at most ${p.limit} entries; nothing was changed (do its subfolders first)`,
  },
  recursiveFlag: { code: "bad_request", message: 'recursive must be "true" or "false"' },
  folderIntoItself: { code: "conflict", message: "a folder cannot be moved into itself; nothing was changed" },
  folderOntoAncestor: {
    code: "conflict",
    message: "the destination holds the source folder; nothing was changed",
  },
  // -- line-ranged reads (worker/line-read.ts)
  linesRange: {
    code: "bad_request",
    message: (p: { max: number }) => `offset must be an integer from 1, limit an integer from 1 to ${p.max}`,
  },
  notText: { code: "conflict", message: "that file is not UTF-8 text" },
  lineTooLong: {
    code: "too_large",
    message: (p: { limit: number }) => `that line is over ${p.limit} bytes; read bytes with Range`,
  },
  linesFileTooLarge: {
    code: "too_large",
    message: (p: { limit: number }) => `line reads take files of at most ${p.limit} bytes; read bytes with Range`,
  },
  keptChanging: { code: "conflict", message: "the file kept changing while it was read" },
  preconditionFailed: { code: "precondition_failed", message: "precondition failed" },
  malformedSha256: { code: "bad_request", message: 'a "sha256:" condition needs 64 hex digits' },
  rangeNotSatisfiable: { code: "range_not_satisfiable", message: "range not satisfiable" },
  // -- uploads
  lengthRequired: { code: "length_required", message: "a body of known length is required" },
  contentTypeInvalid: {
    code: "bad_request",
    message: (p: { max: number }) =>
      `Content-Type must be at most ${p.max} bytes of visible ASCII, with spaces or tabs only between them; nothing was written`,
  },
  lengthMismatch: { code: "bad_request", message: "the body did not match its Content-Length" },
  tooSlow: { code: "bad_request", message: "the body arrived too slowly; nothing was written" },
  tooManyUploads: {
    code: "unavailable",
    message: "too many uploads in progress; nothing was written, try again later",
  },
  tooLarge: { code: "too_large", message: (p: { limit: number }) => `files are limited to ${p.limit} bytes` },
  bodyTooLarge: {
    code: "too_large",
    message: (p: { limit: number }) => `the request body is limited to ${p.limit} bytes`,
  },
  // -- storage failing
  unavailable: { code: "unavailable", message: "storage temporarily unavailable" },
  storageFailed: { code: "unavailable", message: "storage failed; nothing was written" },
  copyFailed: { code: "unavailable", message: "the copy failed; the source is untouched" },
  otherFilesystem: {
    code: "unavailable",
    message: "the destination is on another filesystem; the source is untouched",
  },
  backendMissing: { code: "unavailable", message: "this cap's storage backend is not configured here" },
  noTokenKey: { code: "unavailable", message: "this vault has no token key configured" },
  // -- the declared state format (shared/state-format.ts): an operator's matter, never a client's
  stateFormatNewer: {
    code: "unavailable",
    message: (p: { stored: number; build: number }) =>
      `this vault's state is format ${p.stored}, written by a newer capvault; this build reads formats up to ${p.build}, so it reads and writes nothing: upgrade capvault (docs/upgrading.md)`,
  },
  stateFormatUnreadable: {
    code: "unavailable",
    message:
      "this vault's state carries a format stamp this build cannot read, so it reads and writes nothing (docs/upgrading.md)",
  },
  stateMigrationFailed: {
    code: "unavailable",
    message: (p: { from: number; to: number }) =>
      `this vault's state could not be migrated from format ${p.from} to ${p.to}; it was left in format ${p.from}, untouched`,
  },
  noPublicUrl: {
    code: "unavailable",
    message: "this vault has no public URL configured (CAPVAULT_PUBLIC_URL), so it hands out no cap URLs",
  },
} as const satisfies Record<string, RefusalEntry>;
