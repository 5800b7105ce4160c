/**
 * How the LangGraph adapters name and hold things in a cap: names made into
 * one plain path segment each, serialized values kept readable, and the
 * typed errors for what does not fit.
 */

/**
 * A LangGraph key (thread id, namespace, checkpoint id, task id) as one path
 * segment. Anything but ASCII letters, digits, `-` and `_` is percent-encoded
 * (UTF-8), so `/` cannot nest, `.` and `..` cannot name a folder's self or
 * parent, `~` or `C:` cannot make the path look absolute, and `.capvault-`
 * cannot reach the vault's reserved names. The empty string stays empty: the
 * caller prefixes it (`ns-`). Reversible by {@link decodeSegment}.
 */
export function encodeSegment(key: string): string {
  let out = "";
  for (const byte of new TextEncoder().encode(key)) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9_-]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/** The key a segment encodes, or null for a name this encoding does not make (someone else's file). */
export function decodeSegment(segment: string): string | null {
  if (!/^(?:[A-Za-z0-9_-]|%[0-9A-F]{2})*$/.test(segment)) return null;
  try {
    const key = decodeURIComponent(segment);
    return encodeSegment(key) === segment ? key : null;
  } catch {
    return null;
  }
}

/**
 * Refuses a key the checkpointer cannot keep, before any request: not a
 * string, or empty where LangGraph needs a name (only a checkpoint namespace
 * may be ""). Everything else is encoded, so no spelling can escape.
 */
export function keyArg(field: string, value: unknown, allowEmpty = false): asserts value is string {
  if (typeof value !== "string")
    throw new TypeError(`${field} must be a string (got ${value === null ? "null" : typeof value})`);
  if (value === "" && !allowEmpty) throw new TypeError(`${field} must not be empty`);
}

/** A serialized value as stored: JSON kept as JSON (readable in the console), bytes as base64. */
export type Stored = { type: string; value: unknown; encoding?: "json-text" | "base64" };

/** `serde.dumpsTyped`'s answer as stored. */
export function stored([type, data]: [string, Uint8Array | string]): Stored {
  const text = typeof data === "string" ? data : null;
  if (type === "json") {
    const decoded = text ?? new TextDecoder().decode(data as Uint8Array);
    try {
      return { type, value: JSON.parse(decoded) };
    } catch {
      // Not JSON after all: kept as its text, exactly.
      return { type, value: decoded, encoding: "json-text" };
    }
  }
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  return { type, value: base64(bytes), encoding: "base64" };
}

/** The `[type, data]` that `serde.loadsTyped` takes, from a stored value. */
export function unstored(s: Stored): [string, Uint8Array | string] {
  if (s.encoding === "base64") return [s.type, unbase64(String(s.value))];
  if (s.encoding === "json-text") return [s.type, String(s.value)];
  return [s.type, JSON.stringify(s.value)];
}

/** A file the adapters wrote that no longer reads as one: named, never skipped. */
export class CheckpointFileError extends Error {
  readonly code = "corrupt_file";
  readonly path: string;
  constructor(path: string, why: string) {
    super(`${path}: ${why}`);
    this.name = "CheckpointFileError";
    this.path = path;
  }
}

function base64(bytes: Uint8Array): string {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}

function unbase64(text: string): Uint8Array {
  return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
}
