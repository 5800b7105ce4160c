/**
 * What a session file is: one JSON object per line, UTF-8, each line ended
 * by "\n". The format is the whole contract with whoever else touches the
 * file (a person in the console, another process, a script with `jq`), so it
 * is judged strictly in both directions: an item JSON cannot hold exactly is
 * refused before it is sent, and a line that is not an item is an error
 * naming it, never skipped.
 */
import type { AgentInputItem } from "@openai/agents-core";
import { parseRelPath } from "../../shared/rel-path.ts";

export type CapSessionErrorCode =
  /** The session id cannot be one file's name (`/`, `..`, control characters, empty…). */
  | "invalid_session_id"
  /** An item JSON cannot hold as given (bytes, a class instance, NaN, a cycle…). */
  | "invalid_item"
  /** A line of the session file is not a JSON object. */
  | "corrupt_file"
  /** Other writers kept changing the file: every attempt lost the race. */
  | "contended";

/**
 * A refusal of the session's own, as opposed to the vault's: the vault's
 * refusals (`forbidden`, `no_such_cap`, `too_large`, …) stay the SDK's
 * `CapError`, so one `code` check tells them apart.
 */
export class CapSessionError extends Error {
  readonly code: CapSessionErrorCode;
  /** The session file's path in the cap, for errors about the file. */
  readonly path: string | undefined;
  /** The 1-based line of a `corrupt_file` file. */
  readonly line: number | undefined;

  constructor(
    code: CapSessionErrorCode,
    message: string,
    details: { path?: string; line?: number; cause?: unknown } = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = "CapSessionError";
    this.code = code;
    this.path = details.path;
    this.line = details.line;
  }
}

export const SESSION_SUFFIX = ".jsonl";

/**
 * The file of one session, judged before any request. A session id is one
 * file name, never a path: `/` would nest it where a reader would not look
 * for it, and `..` is refused even inside a name so that no spelling reads
 * as climbing. The rest is the vault's own parser, so what passes here the
 * vault accepts, and what fails fails with the same reason.
 */
export function sessionPath(folder: string, sessionId: unknown): string {
  if (typeof sessionId !== "string") {
    throw new CapSessionError("invalid_session_id", `a session id must be a string (got ${describe(sessionId)})`);
  }
  const refuse = (why: string) =>
    new CapSessionError("invalid_session_id", `session id ${JSON.stringify(sessionId)} ${why}`);
  if (sessionId === "") throw refuse("is empty");
  if (sessionId.includes("/")) throw refuse("contains '/': a session is one file, not a path");
  if (sessionId.includes("..")) throw refuse("contains '..'");
  const path = folder === "" ? `${sessionId}${SESSION_SUFFIX}` : `${folder}/${sessionId}${SESSION_SUFFIX}`;
  const judged = parseRelPath(path);
  if (!judged.ok) throw refuse(`makes no file name the vault takes (${judged.error.code}: ${judged.error.message})`);
  return judged.value.text;
}

/** A folder option as a path the vault takes, "" for the cap's root; a bad one is a TypeError before any request. */
export function folderPath(folder: unknown): string {
  if (folder === undefined || folder === "") return "";
  if (typeof folder !== "string") throw new TypeError(`folder must be a string (got ${describe(folder)})`);
  const judged = parseRelPath(folder);
  if (!judged.ok)
    throw new TypeError(`folder ${JSON.stringify(folder)}: ${judged.error.code}: ${judged.error.message}`);
  return judged.value.text;
}

/**
 * The lines that append `items`, each checked first: JSON.stringify would
 * quietly turn bytes into `{"0":…}`, drop a class's type and NaN's value,
 * and a value read back unlike the one added is history rewritten. (The
 * runner already stores bytes as data URLs, so its items always pass.)
 */
export function itemLines(items: readonly AgentInputItem[]): string {
  if (!Array.isArray(items)) throw new TypeError(`items must be an array (got ${describe(items)})`);
  let lines = "";
  items.forEach((item, index) => {
    const at = `items[${index}]`;
    if (!isPlainObject(item)) throw invalidItem(at, `is ${describe(item)}, not an object`);
    checkJsonValue(item, at, new Set());
    lines += `${JSON.stringify(item)}\n`;
  });
  return lines;
}

/** A parsed session file, and where its last line starts (what `popItem` cuts at). */
export interface SessionFile {
  items: AgentInputItem[];
  lastLineStart: number;
  /** The file ends without "\n" (edited by hand): an append starts a new line first. */
  unterminated: boolean;
}

const NEWLINE = 0x0a;
const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/**
 * Every line of `bytes` as an item, or a `corrupt_file` error naming the
 * first line that is not one. Lines are decoded one by one so that bad UTF-8
 * is named by its line too.
 */
export function parseSessionFile(bytes: Uint8Array, path: string): SessionFile {
  const items: AgentInputItem[] = [];
  let start = 0;
  let lastLineStart = 0;
  while (start < bytes.length) {
    const newline = bytes.indexOf(NEWLINE, start);
    const end = newline === -1 ? bytes.length : newline;
    const line = items.length + 1;
    const corrupt = (why: string) =>
      new CapSessionError("corrupt_file", `${path}: line ${line} ${why}; nothing was skipped or changed`, {
        path,
        line,
      });
    let text: string;
    try {
      text = strict.decode(bytes.subarray(start, end));
    } catch {
      throw corrupt("is not UTF-8");
    }
    if (text.trim() === "") throw corrupt("is empty");
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      throw corrupt(`is not JSON (${(error as Error).message})`);
    }
    if (!isPlainObject(value)) throw corrupt(`is ${describe(value)}, not a JSON object`);
    items.push(value as AgentInputItem);
    lastLineStart = start;
    start = end + 1;
  }
  return { items, lastLineStart, unterminated: bytes.length > 0 && bytes[bytes.length - 1] !== NEWLINE };
}

function checkJsonValue(value: unknown, at: string, ancestors: Set<object>): void {
  if (value === null || typeof value === "string" || typeof value === "boolean") return;
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw invalidItem(at, `is ${value}, which JSON writes as null`);
    return;
  }
  if (typeof value !== "object") throw invalidItem(at, `is ${describe(value)}, which JSON cannot hold`);
  if (ancestors.has(value)) throw invalidItem(at, "refers back to itself");
  ancestors.add(value);
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (value[i] === undefined) throw invalidItem(`${at}[${i}]`, "is undefined, which JSON writes as null");
      checkJsonValue(value[i], `${at}[${i}]`, ancestors);
    }
  } else if (isPlainObject(value)) {
    // An undefined property is left out, as if never set: an item reads back the same.
    for (const [key, entry] of Object.entries(value)) {
      if (entry !== undefined) checkJsonValue(entry, `${at}.${key}`, ancestors);
    }
  } else {
    const what = value instanceof Uint8Array ? "bytes (a Uint8Array)" : describe(value);
    throw invalidItem(at, `is ${what}, which JSON cannot hold; store bytes as a base64 string or data URL`);
  }
  ancestors.delete(value);
}

function invalidItem(at: string, why: string): CapSessionError {
  return new CapSessionError("invalid_item", `${at} ${why}; nothing was written`);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") {
    const name = Object.getPrototypeOf(value)?.constructor?.name;
    return name && name !== "Object" ? `a ${name}` : "an object";
  }
  return typeof value === "number" || typeof value === "boolean" ? String(value) : `a ${typeof value}`;
}
