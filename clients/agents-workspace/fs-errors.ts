import { FILE_REFUSALS } from "../../shared/refusals-files.ts";

/** A Node-like error code (`err.code`), as fs callers test for. */
export type FsCode =
  | "ENOENT"
  | "EACCES"
  | "EISDIR"
  | "ENOTDIR"
  | "EEXIST"
  | "ENOTEMPTY"
  | "EINVAL"
  | "EFBIG"
  | "ENOSPC"
  | "EILSEQ"
  | "EPERM"
  | "E2BIG"
  | "ENOTSUP"
  | "EAGAIN"
  | "EIO";

/**
 * A refused workspace call. `code` is Node's (ENOENT, EACCES, ...), `vaultCode`
 * the vault's refusal code when the vault refused (`not_found`, `forbidden`,
 * `no_such_cap`, ...), and the message keeps the vault's own text:
 * `EACCES: write '/a.md' (forbidden: this operation needs the write right)`.
 */
export class WorkspaceFsError extends Error {
  readonly code: FsCode;
  readonly vaultCode: string | undefined;
  readonly syscall: string;
  readonly path: string;

  constructor(code: FsCode, syscall: string, path: string, detail: string, vaultCode?: string) {
    super(`${code}: ${syscall} '${path}' (${detail})`);
    this.name = "WorkspaceFsError";
    this.code = code;
    this.vaultCode = vaultCode;
    this.syscall = syscall;
    this.path = path;
  }
}

/** The refusal code a binding error's message leads with (`code: text`), and the text. */
function refusalOf(error: unknown): { code: string; text: string } | null {
  const message = error instanceof Error ? error.message : String(error);
  const m = /^([a-z_]+): (.*)$/s.exec(message);
  return m ? { code: m[1]!, text: m[2]! } : null;
}

/** Conflicts the vault words distinctly, each with the Node code it means. */
const CONFLICTS: [string, FsCode][] = [
  [FILE_REFUSALS.isDirectory.message, "EISDIR"],
  [FILE_REFUSALS.destinationIsDirectory.message, "EISDIR"],
  [FILE_REFUSALS.isFile.message, "ENOTDIR"],
  [FILE_REFUSALS.parentIsFile.message, "ENOTDIR"],
  [FILE_REFUSALS.destinationParentIsFile.message, "ENOTDIR"],
  [FILE_REFUSALS.folderNotEmpty.message, "ENOTEMPTY"],
  [FILE_REFUSALS.destinationExists.message, "EEXIST"],
  [FILE_REFUSALS.notText.message, "EILSEQ"],
];

/** The Node code a vault refusal implies; `conflict` by its text, else `fallback` (the operation knows best). */
export function fsCodeOf(vaultCode: string, text: string, conflict: FsCode = "EEXIST"): FsCode {
  switch (vaultCode) {
    case "not_found":
      return "ENOENT";
    case "forbidden":
    case "no_such_cap":
    case "unauthorized":
    case "outside_root":
    case "legacy_token":
      return "EACCES";
    case "invalid_path":
    case "absolute_path":
    case "path_escapes":
    case "bad_request":
    case "range_not_satisfiable":
      return "EINVAL";
    case "too_large":
      return "EFBIG";
    case "quota_exceeded":
      return "ENOSPC";
    case "precondition_failed":
      return "EAGAIN";
    case "conflict":
      return CONFLICTS.find(([words]) => text.startsWith(words))?.[1] ?? conflict;
    default:
      return "EIO";
  }
}

/** `error` (a refusal over the binding, or anything else) as a {@link WorkspaceFsError}. */
export function toFsError(error: unknown, syscall: string, path: string, conflict?: FsCode): WorkspaceFsError {
  if (error instanceof WorkspaceFsError) return error;
  const refusal = refusalOf(error);
  const message = error instanceof Error ? error.message : String(error);
  if (!refusal) return new WorkspaceFsError("EIO", syscall, path, message);
  const code = fsCodeOf(refusal.code, refusal.text, conflict);
  return new WorkspaceFsError(code, syscall, path, code === "ENOENT" ? message : notMissing(message), refusal.code);
}

/**
 * A refusal that is not ENOENT must not read as one. Callers sniff message
 * text as well as `code`: `@cloudflare/computer`'s WorkspaceFileStore (under
 * Think's read and edit tools) takes any message matching /ENOENT|no such/i
 * for a missing file. So a revoked cap's `no_such_cap: no such capability`
 * made Think's `read` answer "File not found", and the model would go on as
 * if the file were not there (test/workers-think). The vault's words stay,
 * with "no such" said as "unknown".
 */
function notMissing(text: string): string {
  return text.replace(/no such/gi, "unknown");
}

/** Whether `error` means "nothing there" (ENOENT). */
export function isMissing(error: unknown): boolean {
  return error instanceof WorkspaceFsError && error.code === "ENOENT";
}
