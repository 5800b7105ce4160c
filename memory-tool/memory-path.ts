import { refuse } from "../shared/refusals.ts";
import { parseRelPath, type RelPath } from "../shared/rel-path.ts";
import { failed, ok, type Result } from "../shared/result.ts";
import { memoryRefusal } from "./memory-refusals.ts";

/** Where the memory tool's directory appears to the model. */
export const MEMORY_MOUNT = "/memories";

/** A memory path that names something inside the cap. */
export interface MemoryPath {
  /** Relative to the cap's root; `segments: []` is `/memories` itself. */
  rel: RelPath;
  /** The path as the model wrote it: it passed the parser, so it is safe to echo back. */
  shown: string;
}

/**
 * Maps a memory path onto the cap: `/memories` is the cap's root and
 * `/memories/x/y.md` is `x/y.md`. Only `/memories` itself and paths under
 * `/memories/` are accepted; the separator is required, so `/memoriesX`
 * never slices down to `X` (the prefix bug the reference SDKs shipped). The
 * remainder goes through the one path parser, so `..`, `.`, empty segments
 * and every other refused spelling are refused here exactly as by the cap.
 *
 * @example
 * toCapPath("/memories/notes/a.md")   // ok: rel.text "notes/a.md"
 * toCapPath("/memories")              // ok: the root
 * toCapPath("/memories/..")           // fail: path_escapes
 * toCapPath("/memoriesX")             // fail: invalid_path
 */
export function toCapPath(raw: unknown): Result<MemoryPath> {
  if (typeof raw !== "string") return refuse("notAString", { field: "path" });
  let remainder: string;
  if (raw === MEMORY_MOUNT) remainder = "";
  else if (raw.startsWith(`${MEMORY_MOUNT}/`)) remainder = raw.slice(MEMORY_MOUNT.length + 1);
  else return failed(memoryRefusal("notMemoryPath"));
  const rel = parseRelPath(remainder);
  if (!rel.ok) return rel;
  return ok({ rel: rel.value, shown: raw });
}

/** The cap-relative path of a child of `dir`. */
export function childPath(dir: RelPath | string, name: string): string {
  const base = typeof dir === "string" ? dir : dir.text;
  return base === "" ? name : `${base}/${name}`;
}

/** `/memories/x/` → `/memories/x`, so listed children read `/memories/x/child`, never `//child`. */
export function withoutTrailingSlash(shown: string): string {
  return shown.length > 1 && shown.endsWith("/") ? shown.slice(0, -1) : shown;
}

// Control characters and line separators could forge lines in a tool result.
const UNSAFE_CHAR = /[\u0000-\u001f\u007f\u0085\u2028\u2029]/gu;
const MAX_SHOWN = 300;

/**
 * A value the model sent, made safe to quote in an error: unsafe characters
 * escaped, lone surrogates replaced, long values cut.
 */
export function quoteInput(value: unknown): string {
  const text = typeof value === "string" ? value : (JSON.stringify(value) ?? String(value));
  const cut = text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN)}…` : text;
  return cut.toWellFormed().replace(UNSAFE_CHAR, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
