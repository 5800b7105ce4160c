/**
 * How CapStore names things in a cap: a namespace label is a folder's name as
 * it is (so the console shows `users/alice/`), and a key is a file's name,
 * escaped only where a file name could not hold it. Both are judged here,
 * before any request, so a hostile label or key never becomes a path.
 */
import { InvalidNamespaceError } from "@langchain/langgraph-checkpoint";

export type CapStoreErrorCode = "invalid_key" | "invalid_value" | "outside_namespace" | "corrupt_file" | "scan_limit";

/**
 * What CapStore refuses itself: a key or value it cannot keep, or a namespace
 * outside the one it holds (before any request), an item file that does not
 * read as one (`path` names it), a walk past `scanLimit`. What the vault refuses stays the SDK's CapError.
 */
export class CapStoreError extends Error {
  readonly code: CapStoreErrorCode;
  readonly path: string | undefined;
  constructor(code: CapStoreErrorCode, message: string, path?: string) {
    super(path === undefined ? message : `${path}: ${message}`);
    this.name = "CapStoreError";
    this.code = code;
    this.path = path;
  }
}

// The vault's own control characters (docs/paths.md): no name may hold them.
const CONTROL = /[\u0000-\u001f\u007f\u0085\u2028\u2029]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const MAX_SEGMENT_BYTES = 255;
const SUFFIX = ".json";
const utf8 = new TextEncoder();

/**
 * Refuses a label that cannot be one folder name, with LangGraph's own error.
 * LangGraph already refuses `.` (so `.` and `..` too), `:`, NUL and "";
 * here also `/` and `\` (they would nest), control characters and unpaired
 * surrogates (the vault refuses them), a leading `~` (an absolute path to
 * the vault when the label comes first), and over 255 UTF-8 bytes.
 */
export function checkLabel(label: unknown, where: readonly unknown[]): asserts label is string {
  const why =
    typeof label !== "string"
      ? `must be a string, not ${label === null ? "null" : typeof label}`
      : label === ""
        ? "must not be empty"
        : /[.:/\\]/.test(label)
          ? "must not contain '.', ':', '/' or '\\'"
          : CONTROL.test(label)
            ? "must not contain control characters"
            : LONE_SURROGATE.test(label)
              ? "must not contain an unpaired surrogate"
              : label.startsWith("~")
                ? "must not start with '~'"
                : utf8.encode(label).length > MAX_SEGMENT_BYTES
                  ? `must be at most ${MAX_SEGMENT_BYTES} UTF-8 bytes`
                  : null;
  if (why !== null)
    throw new InvalidNamespaceError(`Invalid namespace label ${JSON.stringify(label)} in ${show(where)}: ${why}.`);
}

/** A namespace as folders; `allowEmpty` for a search prefix (everything). */
export function checkNamespace(namespace: unknown, allowEmpty: boolean): asserts namespace is string[] {
  if (!Array.isArray(namespace)) throw new InvalidNamespaceError(`A namespace must be an array of labels.`);
  if (namespace.length === 0 && !allowEmpty) throw new InvalidNamespaceError("Namespace cannot be empty.");
  for (const label of namespace) checkLabel(label, namespace);
}

function show(namespace: readonly unknown[]): string {
  try {
    return JSON.stringify(namespace);
  } catch {
    return String(namespace);
  }
}

/**
 * A key as a file name (without `.json`): kept as typed, but for what no file
 * name may hold, percent-encoded (UTF-8): `%` itself, `/`, `\`, the vault's
 * control characters, and a leading `.` (so no key makes a hidden or
 * reserved name, or `.`/`..`). `notes/2026 draft` is `notes%2F2026 draft.json`.
 * The empty key and unpaired surrogates are refused: no file name can stand
 * for them without a second encoding.
 */
export function encodeKey(key: unknown): string {
  if (typeof key !== "string")
    throw new CapStoreError("invalid_key", `a key must be a string, not ${key === null ? "null" : typeof key}`);
  if (key === "") throw new CapStoreError("invalid_key", "a key must not be empty");
  if (LONE_SURROGATE.test(key)) throw new CapStoreError("invalid_key", "a key must not contain an unpaired surrogate");
  let out = "";
  for (const ch of key) {
    const unsafe = ch === "%" || ch === "/" || ch === "\\" || CONTROL.test(ch) || (out === "" && ch === ".");
    out += unsafe ? percent(ch) : ch;
  }
  if (utf8.encode(out + SUFFIX).length > MAX_SEGMENT_BYTES)
    throw new CapStoreError("invalid_key", `a key's file name must be at most ${MAX_SEGMENT_BYTES} UTF-8 bytes`);
  return out;
}

function percent(ch: string): string {
  let out = "";
  for (const byte of utf8.encode(ch)) out += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  return out;
}

/** The file name of a key's item. */
export function itemFileName(key: string): string {
  return encodeKey(key) + SUFFIX;
}

/**
 * The key a file name stands for, or null for a name CapStore never writes
 * (someone else's file, or a spelling of a key other than its own, which
 * `get` would never find): such files are not items.
 */
export function keyOfFileName(name: string): string | null {
  if (!name.endsWith(SUFFIX)) return null;
  const stem = name.slice(0, -SUFFIX.length);
  if (stem === "" || /%(?![0-9A-F]{2})/.test(stem)) return null;
  try {
    const key = decodeURIComponent(stem);
    return encodeKey(key) === stem ? key : null;
  } catch {
    return null;
  }
}

/** Whether a folder name is a label CapStore could have written (others are not namespaces). */
export function isLabel(name: string): boolean {
  try {
    checkLabel(name, [name]);
    return true;
  } catch {
    return false;
  }
}
