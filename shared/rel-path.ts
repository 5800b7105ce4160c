import { refuse } from "./refusals.ts";
import { ok, type Result } from "./result.ts";

/** R2's key limit, in UTF-8 bytes. The disk backend enforces the same one so both behave alike. */
export const MAX_KEY_BYTES = 1024;
/** The usual file-name limit (NAME_MAX), in UTF-8 bytes. */
export const MAX_SEGMENT_BYTES = 255;
/**
 * Names the disk backend uses for its own temp files. They are refused on every
 * backend so that no cap can read, write or even name them, and so that the
 * backends stay observably identical.
 */
export const RESERVED_NAME_PREFIX = ".capvault-";

/**
 * Whether a name is reserved, in any letter case: on a case-insensitive
 * folder (WSL's /mnt/c, an ext4 casefold directory, vfat) `.CAPVAULT-FORMAT`
 * or `.Capvault-meta/…` names the vault's own files.
 */
export function isReservedName(name: string): boolean {
  return name.slice(0, RESERVED_NAME_PREFIX.length).toLowerCase() === RESERVED_NAME_PREFIX;
}

/** A path relative to a cap's root that passed {@link parseRelPath}. `[]` is the root itself. */
export interface RelPath {
  readonly segments: readonly string[];
  /** The canonical spelling: segments joined by `/`, no leading or trailing slash. */
  readonly text: string;
}

const encoder = new TextEncoder();

export function utf8Length(text: string): number {
  return encoder.encode(text).length;
}

// U+0000–U+001F, U+007F, U+0085, U+2028, U+2029: control characters and line
// separators that let a name forge log lines or render differently than stored.
const FORBIDDEN_CHAR = /[\u0000-\u001f\u007f\u0085\u2028\u2029]/u;
const DRIVE_LETTER = /^[A-Za-z]:/;

/**
 * The one parser for every path a cap holder names. It runs once, in the cap's
 * Durable Object, on the raw string the client sent as data (never a URL path,
 * which clients normalise). Anything it accepts, joined to any root, stays
 * under that root; anything it refuses never reaches storage.
 *
 * @example
 * parseRelPath("notes/today.md")   // ok: segments ["notes", "today.md"]
 * parseRelPath("a/../b")           // fail: path_escapes
 * parseRelPath("/etc/passwd")      // fail: absolute_path
 */
export function parseRelPath(input: string | null | undefined): Result<RelPath> {
  if (input === undefined || input === null || input === "") return ok(ROOT_PATH);
  if (typeof input !== "string") return refuse("invalidPath");
  if (input.startsWith("/") || input.startsWith("\\") || input.startsWith("~") || DRIVE_LETTER.test(input)) {
    return refuse("absolutePath");
  }
  // One trailing slash names the same thing as none ("skills/" is "skills").
  const trimmed = input.endsWith("/") ? input.slice(0, -1) : input;
  const segments = trimmed.split("/");
  // `..` is judged before anything else so that "a/../b" is always an escape,
  // whatever else is wrong with it.
  if (segments.includes("..")) return refuse("pathEscapes");
  if (input.includes("\\")) return refuse("backslash");
  if (FORBIDDEN_CHAR.test(input)) return refuse("controlCharacter");
  if (!input.isWellFormed()) return refuse("unpairedSurrogate");
  for (const segment of segments) {
    if (segment === "" || segment === ".") return refuse("emptySegment");
    if (utf8Length(segment) > MAX_SEGMENT_BYTES) return refuse("segmentTooLong");
    if (isReservedName(segment)) return refuse("reservedName");
  }
  if (utf8Length(trimmed) > MAX_KEY_BYTES) return refuse("pathTooLong");
  return ok({ segments, text: segments.join("/") });
}

const ROOT_PATH: RelPath = Object.freeze({ segments: Object.freeze([]) as readonly string[], text: "" });

/** Appends a validated relative path to a root prefix, giving a new root prefix ending in `/`. */
export function childRoot(root: string, path: RelPath): string {
  return path.text === "" ? root : `${root}${path.text}/`;
}

/**
 * Whether a name found in a folder is one a cap can address there, which is
 * what a listing shows. At the cap's root the name must parse as a path on
 * its own: `~x` and `c:` are absolute there, so no holder of the cap can name
 * them. Below the root it only has to be a valid segment, since `a/~x` and
 * `a/c:` are ordinary paths. (Judging every name as a whole path hid such
 * files from listings below the root and broke list cursors after them.)
 *
 * @example
 * isListableName("~x", true);  // false: "~x" is an absolute path
 * isListableName("~x", false); // true:  "a/~x" names it
 */
export function isListableName(name: string, atCapRoot: boolean): boolean {
  const parsed = parseRelPath(atCapRoot ? name : `x/${name}`);
  const at = atCapRoot ? 0 : 1;
  return parsed.ok && parsed.value.segments.length === at + 1 && parsed.value.segments[at] === name;
}
