import { RE2JS } from "re2js";
import { parseLimit } from "../durable-objects/list-cursor.ts";
import { checkKey } from "../durable-objects/path-check.ts";
import { compileGlob, type Glob } from "../shared/glob-compile.ts";
import { GlobMeter, globMatches, MAX_GLOB_STEPS } from "../shared/glob-match.ts";
import { refuse } from "../shared/refusals.ts";
import { MAX_KEY_BYTES, parseRelPath, type RelPath, utf8Length } from "../shared/rel-path.ts";
import { failed, ok, type Result } from "../shared/result.ts";
import { decodeUtf8Strict } from "../shared/strict-utf8.ts";
import type { SearchLine, SearchMode, SearchPage, SearchSkip } from "../shared/wire-types.ts";
import { yieldTurn } from "../shared/yield-turn.ts";
import { selectStorage } from "../storage-adapters/select-storage.ts";
import type { Root, StorageAdapter } from "../storage-adapters/storage-adapter.ts";
import type { CapStub } from "./cap-stub.ts";
import type { Env } from "./env.ts";
import { mcpRefusal } from "./mcp/mcp-refusals.ts";

/**
 * Bounds of one search request. The scan is RE2 (re2js: linear in the text
 * whatever the pattern), so the bytes one request scans bound its CPU; the
 * costliest patterns measured take about 150 ms of CPU for 2 MiB (the
 * hostile table, docs/benchmarks.md).
 */
export const SEARCH_MAX_PATTERN_CHARS = 1000;
export const SEARCH_MAX_PROGRAM = 2000;
export const SEARCH_MAX_FILE_BYTES = 512 * 1024;
export const SEARCH_MAX_BYTES = 2 * 1024 * 1024;
/** Files considered (read, or skipped for their size or content) per request: each is a storage call. */
export const SEARCH_MAX_FILES = 200;
/** A longer line is one RE2 call that cannot take turns: the file is skipped instead. */
export const SEARCH_MAX_LINE_CHARS = 16 * 1024;
export const SEARCH_MAX_CONTEXT = 10;
export const SEARCH_MAX_LIMIT = 200;
export const SEARCH_DEFAULT_LIMIT = 100;
const SHOWN_CHARS = 500;
/** Characters scanned between turns given to other requests (shared/yield-turn.ts). */
const YIELD_CHARS = 16 * 1024;
/**
 * re2js falls back from its DFA when the DFA's cache thrashes (`a[ab]{200}$`,
 * `\pL{0,700}$`), and then pays for every live thread at every character:
 * up to ~110 ns per instruction per character measured, so 2 MiB under a
 * 2,000-instruction program would be minutes of CPU. Programs up to
 * {@link SEARCH_CHEAP_PROGRAM} instructions ran at DFA speed in every case
 * measured; above it, the bytes a request scans, a line and the stretch
 * between turns shrink with the program (about 0.5 s, 50 ms, 30 ms at worst).
 */
export const SEARCH_CHEAP_PROGRAM = 16;
const SEARCH_MAX_WORK = 5_000_000;
const SEARCH_MAX_LINE_WORK = 500_000;

/** What one request may scan with a program of `size` instructions: bytes, line length, and the weight of a character. */
export function searchBudget(size: number): { bytes: number; lineChars: number; weight: number } {
  if (size <= SEARCH_CHEAP_PROGRAM) return { bytes: SEARCH_MAX_BYTES, lineChars: SEARCH_MAX_LINE_CHARS, weight: 1 };
  return {
    bytes: Math.min(SEARCH_MAX_BYTES, Math.floor(SEARCH_MAX_WORK / size)),
    lineChars: Math.min(SEARCH_MAX_LINE_CHARS, Math.floor(SEARCH_MAX_LINE_WORK / size)),
    weight: size / SEARCH_CHEAP_PROGRAM,
  };
}
const LISTING_LIMIT = 500;
const MAX_LISTINGS = 8;

export interface SearchQuery {
  regex: RE2JS;
  glob: { glob: Glob; byName: boolean } | null;
  mode: SearchMode;
  context: number;
  limit: number;
  resume: SearchCursor | null;
}

/** Where a search resumes: listing after `a`; in file `f` (if it comes first), after its first `m` matches. */
interface SearchCursor {
  a: string | null;
  f: string | null;
  m: number;
}

export type SearchParams = Record<
  "pattern" | "glob" | "mode" | "context" | "ignoreCase" | "cursor" | "limit",
  string | null
>;

export const SEARCH_PARAMS = ["path", "pattern", "glob", "mode", "context", "ignoreCase", "cursor", "limit"] as const;

/** The request's search, checked before any storage is touched: each bad parameter a typed 400. */
export function parseSearchQuery(raw: SearchParams): Result<SearchQuery> {
  if (raw.pattern === null || raw.pattern === "") return refuse("searchPatternMissing");
  if (raw.pattern.length > SEARCH_MAX_PATTERN_CHARS)
    return refuse("searchPatternTooLong", { max: SEARCH_MAX_PATTERN_CHARS });
  if (raw.ignoreCase !== null && raw.ignoreCase !== "true" && raw.ignoreCase !== "false")
    return refuse("searchIgnoreCase");
  let regex: RE2JS;
  try {
    regex = RE2JS.compile(raw.pattern, raw.ignoreCase === "true" ? RE2JS.CASE_INSENSITIVE : 0);
  } catch {
    return refuse("searchPatternSyntax");
  }
  if (regex.programSize() > SEARCH_MAX_PROGRAM) return refuse("searchPatternTooComplex", { max: SEARCH_MAX_PROGRAM });
  const mode = raw.mode ?? "lines";
  if (mode !== "lines" && mode !== "count" && mode !== "files") return refuse("searchMode");
  const context = raw.context === null || raw.context === "" ? 0 : Number(raw.context);
  if (!/^\d{0,2}$/.test(raw.context ?? "") || context > SEARCH_MAX_CONTEXT)
    return refuse("searchContext", { max: SEARCH_MAX_CONTEXT });
  const limit = raw.limit === null ? ok(SEARCH_DEFAULT_LIMIT) : parseLimit(raw.limit, SEARCH_MAX_LIMIT);
  if (!limit.ok) return limit;
  let glob: SearchQuery["glob"] = null;
  if (raw.glob !== null && raw.glob !== "") {
    const compiled = compileGlob(raw.glob);
    if (!compiled.ok) return compiled;
    glob = { glob: compiled.value, byName: !raw.glob.includes("/") };
  }
  const resume = decodeSearchCursor(raw.cursor);
  if (!resume.ok) return resume;
  return ok({ regex, glob, mode, context, limit: limit.value, resume: resume.value });
}

/**
 * A content search through a cap: the cap's object decides (alive, `read`
 * and `list`, the folder) and grants it; the worker then walks the folder's
 * files in key order (the same on every backend) and scans each line with
 * RE2, within the bounds above, taking turns with other requests.
 */
export async function searchThroughCap(
  cap: CapStub,
  env: Env,
  rawPath: string | null,
  query: SearchQuery,
): Promise<Result<SearchPage>> {
  const grant = await cap.grantSearch(rawPath);
  if (!grant.ok) return grant;
  const storage = selectStorage(env, grant.value.backend);
  if (!storage) return refuse("backendMissing");
  return new Search(storage, grant.value.root, grant.value.path, query).run();
}

class Search {
  private readonly matches: SearchLine[] = [];
  private readonly counts: { path: string; count: number }[] = [];
  private readonly files: string[] = [];
  private readonly skipped: SearchSkip[] = [];
  private readonly scanned = { files: 0, bytes: 0 };
  private readonly meter = new GlobMeter();
  private considered = 0;
  private sinceTurn = 0;
  /** Found this page: matching lines (mode lines) or files (count, files). */
  private found = 0;
  private readonly budget: ReturnType<typeof searchBudget>;

  constructor(
    private readonly storage: StorageAdapter,
    private readonly root: Root,
    private readonly dir: RelPath,
    private readonly query: SearchQuery,
  ) {
    this.budget = searchBudget(query.regex.programSize());
  }

  async run(): Promise<Result<SearchPage>> {
    const at = checkKey(this.root, this.dir, "dir");
    if (!at.ok) return at;
    const resume = this.query.resume;
    let position = resume?.a ?? null;
    let inFile = resume?.f ?? null;
    let skipMatches = resume?.m ?? 0;
    for (let listings = 0; listings < MAX_LISTINGS; listings++) {
      const page = await this.storage.list(at.value, { after: position, limit: LISTING_LIMIT, depth: 0 });
      if (!page.ok) return page;
      const { entries, next } = page.value;
      for (const [i, entry] of entries.entries()) {
        if (entry.type !== "file") continue;
        const skip = entry.name === inFile ? skipMatches : 0;
        inFile = null;
        skipMatches = 0;
        const done = await this.file(entry.name, entry.size ?? 0, skip);
        if (!done.ok) return done;
        if (done.value === "budget") return ok(this.page({ a: position, f: null, m: 0 }));
        if (typeof done.value === "number") return ok(this.page({ a: position, f: entry.name, m: done.value }));
        position = entry.name;
        if (this.found >= this.query.limit) {
          const last = next === null && i === entries.length - 1;
          return ok(this.page(last ? null : { a: position, f: null, m: 0 }));
        }
      }
      if (next === null) return ok(this.page(null));
      position = next;
    }
    return ok(this.page({ a: position, f: null, m: 0 }));
  }

  /**
   * One file: `"done"`; `"budget"` when this request may not take it on
   * (resume before it); or the matches of it shown so far when the page
   * filled up inside it (resume in it, after them).
   */
  private async file(name: string, size: number, skip: number): Promise<Result<"done" | "budget" | number>> {
    const glob = this.query.glob;
    if (glob) {
      const matched = globMatches(glob.glob, glob.byName ? name.slice(name.lastIndexOf("/") + 1) : name, this.meter);
      if (matched === null) return failed(mcpRefusal("globTooCostly", { max: MAX_GLOB_STEPS }));
      if (!matched) return ok("done");
    }
    if (this.considered >= SEARCH_MAX_FILES) return ok("budget");
    const shown = this.dir.text === "" ? name : `${this.dir.text}/${name}`;
    if (size > Math.min(SEARCH_MAX_FILE_BYTES, this.budget.bytes)) {
      this.considered++;
      this.skipped.push({ path: shown, reason: "too_large" });
      return ok("done");
    }
    if (this.scanned.files > 0 && this.scanned.bytes + size > this.budget.bytes) return ok("budget");
    this.considered++;
    // A storage read can answer without a task of its own: a turn per file lets other requests in.
    await yieldTurn();
    const text = await this.read(name);
    if (text === null) return ok("done"); // gone since listed, or refused: never part of the answer
    if (text === "too_large" || text === "binary") {
      this.skipped.push({ path: shown, reason: text });
      return ok("done");
    }
    const lines = (text.startsWith("\uFEFF") ? text.slice(1) : text).split("\n");
    if (lines.at(-1) === "") lines.pop();
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      if (line.length > this.budget.lineChars) {
        this.skipped.push({ path: shown, reason: "long_line" });
        return ok("done");
      }
      if (line.endsWith("\r")) lines[i] = line.slice(0, -1);
    }
    return ok(await this.scan(shown, lines, skip));
  }

  /** The file's text; `null` when it cannot be read now. */
  private async read(name: string): Promise<string | "too_large" | "binary" | null> {
    const path = parseRelPath(this.dir.text === "" ? name : `${this.dir.text}/${name}`);
    if (!path.ok || utf8Length(path.value.text) > MAX_KEY_BYTES) return null;
    const at = checkKey(this.root, path.value, "file");
    if (!at.ok) return null;
    const read = await this.storage.read(at.value, {});
    if (!read.ok || read.value.status !== "body") return null;
    const chunks: Uint8Array[] = [];
    let total = 0;
    const reader = read.value.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      // Grown since it was listed: cut here rather than read without bound.
      if (total > Math.min(SEARCH_MAX_FILE_BYTES, this.budget.bytes)) {
        await reader.cancel().catch(() => undefined);
        return "too_large";
      }
      chunks.push(value);
    }
    this.scanned.files++;
    this.scanned.bytes += total;
    const bytes = new Uint8Array(total);
    let at2 = 0;
    for (const chunk of chunks) {
      bytes.set(chunk, at2);
      at2 += chunk.byteLength;
    }
    if (bytes.includes(0)) return "binary";
    return decodeUtf8Strict(bytes) ?? "binary";
  }

  /** Tests each line; `"done"`, or the matches shown of this file when the page filled up inside it. */
  private async scan(path: string, lines: string[], skip: number): Promise<"done" | number> {
    const { regex, mode } = this.query;
    const hits: number[] = [];
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      this.sinceTurn += (line.length + 1) * this.budget.weight;
      if (this.sinceTurn >= YIELD_CHARS) {
        this.sinceTurn = 0;
        await yieldTurn();
      }
      if (!regex.test(line)) continue;
      hits.push(i);
      if (mode === "files") break;
    }
    if (hits.length === 0) return "done";
    if (mode === "files") {
      this.files.push(path);
      this.found++;
      return "done";
    }
    if (mode === "count") {
      this.counts.push({ path, count: hits.length });
      this.found++;
      return "done";
    }
    return this.showLines(path, lines, hits, skip);
  }

  private showLines(path: string, lines: string[], hits: number[], skip: number): "done" | number {
    const { context } = this.query;
    const isHit = new Set(hits);
    let shownUpTo = -1;
    let shown = skip;
    for (let h = skip; h < hits.length; h++) {
      if (this.found >= this.query.limit) return shown;
      const hit = hits[h]!;
      // Context after the last match shown stops before a match the page has no room for.
      const next = h + 1 < hits.length ? hits[h + 1]! : lines.length;
      const last = this.found + 1 >= this.query.limit ? Math.min(hit + context, next - 1) : hit + context;
      const from = Math.max(hit - context, shownUpTo + 1);
      for (let j = from; j <= Math.min(last, lines.length - 1); j++) this.matches.push(this.row(path, lines, j, isHit));
      shownUpTo = Math.max(shownUpTo, Math.min(last, lines.length - 1));
      this.found++;
      shown++;
    }
    return "done";
  }

  private row(path: string, lines: string[], j: number, isHit: Set<number>): SearchLine {
    const text = lines[j]!;
    const row: SearchLine = { path, line: j + 1, text: text.slice(0, SHOWN_CHARS), match: isHit.has(j) };
    if (text.length > SHOWN_CHARS) row.cut = true;
    return row;
  }

  private page(resume: SearchCursor | null): SearchPage {
    const mode = this.query.mode;
    return {
      ...(mode === "lines"
        ? { matches: this.matches }
        : mode === "count"
          ? { counts: this.counts }
          : { files: this.files }),
      skipped: this.skipped,
      scanned: this.scanned,
      cursor: resume === null ? null : encodeSearchCursor(resume),
    };
  }
}

function encodeSearchCursor(cursor: SearchCursor): string {
  const bytes = new TextEncoder().encode(JSON.stringify(cursor));
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/**
 * The cursor is opaque to clients and checked on the way back in: its paths
 * are only compared with the paths below the searched folder (the listing
 * resumes after `a` within it), so a forged one can only start elsewhere in
 * the same subtree, never outside it.
 */
function decodeSearchCursor(raw: string | null): Result<SearchCursor | null> {
  if (raw === null || raw === "") return ok(null);
  if (raw.length > 4 * MAX_KEY_BYTES || !/^[A-Za-z0-9_-]+$/.test(raw)) return refuse("invalidCursor");
  let value: unknown;
  try {
    const binary = atob(raw.replace(/-/g, "+").replace(/_/g, "/"));
    value = JSON.parse(decodeUtf8Strict(Uint8Array.from(binary, (c) => c.charCodeAt(0))) ?? "");
  } catch {
    return refuse("invalidCursor");
  }
  const pathOrNull = (v: unknown) =>
    v === null || (typeof v === "string" && v !== "" && utf8Length(v) <= MAX_KEY_BYTES);
  if (typeof value !== "object" || value === null || Object.keys(value).length !== 3) return refuse("invalidCursor");
  const { a, f, m } = value as Record<string, unknown>;
  if (!pathOrNull(a) || !pathOrNull(f) || !Number.isSafeInteger(m) || (m as number) < 0) return refuse("invalidCursor");
  return ok({ a: a as string | null, f: f as string | null, m: m as number });
}
