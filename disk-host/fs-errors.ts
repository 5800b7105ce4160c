import { refuse } from "../shared/refusals.ts";
import type { Result } from "../shared/result.ts";

/** The `code` of a Node fs error (`ENOENT`, ...), or `undefined` for anything else. */
export function errnoOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/**
 * Turns an unexpected fs error into a wire code. Node's error messages carry
 * the host path, so neither the message nor the error object ever leaves
 * this function: only the errno and syscall are logged.
 *
 * `ENOTDIR` means a file sits where a folder is needed: a conflict for a
 * write, nothing there for everything else (the adapter interface's rules).
 */
export function failFromFs(error: unknown, doing: "reading" | "writing"): Result<never> {
  switch (errnoOf(error)) {
    case "ENOENT":
      return refuse("notFound");
    case "ENOTDIR":
      return doing === "writing" ? refuse("parentIsFile") : refuse("notFound");
    case "EISDIR":
    case "ENOTEMPTY":
      return refuse("isDirectory");
    case "EEXIST":
      return refuse("fileDirectoryClash");
    case "ENAMETOOLONG":
      return refuse("pathTooLong");
    case "ELOOP":
      return refuse("outsideRoot");
    default:
      logUnexpected(error);
      return refuse("unavailable");
  }
}

/** Logs what went wrong without any path: errno and syscall, or just the error's class. */
export function logUnexpected(error: unknown): void {
  const code = errnoOf(error);
  const syscall = (error as { syscall?: unknown } | null)?.syscall;
  const what = code
    ? `${code}${typeof syscall === "string" ? ` in ${syscall}` : ""}`
    : error instanceof Error
      ? error.name
      : "unknown error";
  console.error(`disk host: unexpected ${what}`);
}
