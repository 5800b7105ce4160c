import {
  BaseStore,
  type Item,
  type MatchCondition,
  type Operation,
  type OperationResults,
  type SearchItem,
} from "@langchain/langgraph-checkpoint";
import { isCapError } from "../typescript/cap-error.ts";
import { FsCap } from "../typescript/fs-cap.ts";
import type { CapOptions } from "../typescript/types.ts";
import {
  collate,
  compareNamespaces,
  matchesCondition,
  matchesFilter,
  matchesQuery,
  queryWords,
} from "./cap-store-match.ts";
import { CapStoreError, checkNamespace, isLabel, itemFileName, keyOfFileName } from "./cap-store-names.ts";

export { CapStoreError, type CapStoreErrorCode } from "./cap-store-names.ts";

export interface CapStoreOptions extends CapOptions {
  /** The folder of the cap that holds the namespaces (default: the cap's root). */
  folder?: string;
  /**
   * The namespace the cap (or `folder`) is the folder of, as a child cap
   * minted on `<folder>/users/alice` is for `["users", "alice"]`: the store
   * then holds that namespace and those below it, named in full as the
   * owner's store names them, and refuses any other before any request.
   */
  namespace?: string[];
  /** Attempts of a put's read-then-write that lost a race before it gives up (default 8). */
  attempts?: number;
  /**
   * The most files one `search` or `listNamespaces` may list (default 10,000):
   * past it, a `scan_limit` CapStoreError rather than a walk without end.
   */
  scanLimit?: number;
}

/** What an item's file holds (format 1), indented so a person can read it in the console. */
interface ItemFile {
  format: 1;
  value: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

/** An item file found by a listing, before it is read. */
interface Listed {
  namespace: string[];
  key: string;
  path: string;
}

type Step =
  | { kind: "get"; namespace: string[]; key: string; path: string }
  | {
      kind: "search";
      prefix: string[];
      filter: Record<string, unknown> | undefined;
      words: string[];
      limit: number;
      offset: number;
    }
  | {
      kind: "list";
      conditions: MatchCondition[];
      maxDepth: number | undefined;
      limit: number | undefined;
      offset: number;
    }
  | { kind: "put"; namespace: string[]; key: string; path: string; value: Record<string, unknown> | null };

type PutStep = Extract<Step, { kind: "put" }>;

const CONCURRENCY = 8;

/**
 * A LangGraph long-term memory store (`BaseStore`) over a cap: a namespace is
 * a folder, one label one folder name, and an item is `<key>.json` in it, so
 * `["users", "alice"]`, `"prefs"` is `users/alice/prefs.json`, readable (and
 * versioned, shared read-only, revoked) like any file of the cap.
 *
 * It answers as InMemoryStore does (docs/langgraph.md lists where not): a
 * batch's reads see the store as it was before the batch, and its puts then
 * apply, the last put of a key winning. Labels and keys are judged before any
 * request; what the vault refuses is the SDK's CapError with the vault's code.
 */
export class CapStore extends BaseStore {
  readonly #cap: FsCap;
  readonly #folder: string;
  readonly #root: readonly string[];
  readonly #attempts: number;
  readonly #scanLimit: number;

  constructor(cap: string | FsCap, options: CapStoreOptions = {}) {
    super();
    this.#cap = typeof cap === "string" ? new FsCap(cap, options) : cap;
    this.#folder = (options.folder ?? "").replace(/\/+$/, "");
    const root = options.namespace ?? [];
    checkNamespace(root, true);
    this.#root = [...root];
    this.#attempts = Math.max(1, options.attempts ?? 8);
    this.#scanLimit = options.scanLimit ?? 10_000;
  }

  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    // Every operation is judged before the first request, so a bad one changes nothing.
    const steps = operations.map((op) => this.#step(op));
    const results = await pool(steps, CONCURRENCY, async (step) => (step.kind === "put" ? null : this.#read(step)));
    // As InMemoryStore: puts after every read, one per key, the last one's value in the first one's place.
    const puts = new Map<string, PutStep>();
    for (const step of steps) if (step.kind === "put") puts.set(step.path, step);
    for (const put of puts.values()) await (put.value === null ? this.#delete(put) : this.#put(put, put.value));
    return results as OperationResults<Op>;
  }

  #step(op: Operation): Step {
    if ("key" in op && "namespace" in op && !("value" in op)) {
      checkNamespace(op.namespace, false);
      this.#within(op.namespace);
      return { kind: "get", namespace: [...op.namespace], key: op.key, path: this.#itemPath(op.namespace, op.key) };
    }
    if ("namespacePrefix" in op) {
      checkNamespace(op.namespacePrefix, true);
      // Above this store's namespace, a search sees what it holds; beside it, nothing this store may name.
      if (!startsWith(this.#root, op.namespacePrefix)) this.#within(op.namespacePrefix);
      if (op.filter != null && (typeof op.filter !== "object" || Array.isArray(op.filter)))
        throw new TypeError("a search filter must be an object of fields");
      return {
        kind: "search",
        prefix: [...op.namespacePrefix],
        filter: op.filter ?? undefined,
        words: queryWords(op.query),
        limit: count("limit", op.limit, 10),
        offset: count("offset", op.offset, 0),
      };
    }
    if ("value" in op) {
      checkNamespace(op.namespace, false);
      this.#within(op.namespace);
      const path = this.#itemPath(op.namespace, op.key);
      if (op.value !== null) checkValue(op.value);
      return { kind: "put", namespace: [...op.namespace], key: op.key, path, value: op.value };
    }
    if ("matchConditions" in op || "limit" in op || "offset" in op || "maxDepth" in op) {
      const conditions = op.matchConditions ?? [];
      if (!Array.isArray(conditions) || !conditions.every((c) => Array.isArray(c?.path)))
        throw new TypeError("matchConditions must be an array of { matchType, path }");
      if (op.maxDepth !== undefined && !(Number.isInteger(op.maxDepth) && op.maxDepth >= 1))
        throw new RangeError(`maxDepth must be an integer of at least 1 (got ${op.maxDepth})`);
      return {
        kind: "list",
        conditions,
        maxDepth: op.maxDepth,
        limit: op.limit == null ? undefined : count("limit", op.limit, 0),
        offset: count("offset", op.offset, 0),
      };
    }
    throw new TypeError("not a store operation: expected a get, put, search or listNamespaces operation");
  }

  async #read(step: Exclude<Step, PutStep>): Promise<Item | SearchItem[] | string[][] | null> {
    if (step.kind === "get") {
      const found = await this.#readItem(step.path);
      return found && itemOf(step.namespace, step.key, found.file);
    }
    if (step.kind === "search") return this.#search(step);
    return this.#listNamespaces(step);
  }

  async #search(step: Extract<Step, { kind: "search" }>): Promise<SearchItem[]> {
    const { prefix, filter, words, limit, offset } = step;
    if (limit === 0) return [];
    const listed = (await this.#walk(this.#deeper(prefix))).sort(
      (a, b) => compareNamespaces(a.namespace, b.namespace) || collate(a.key, b.key),
    );
    const judged = (filter !== undefined && Object.keys(filter).length > 0) || words.length > 0;
    // Unfiltered, the listing alone places every item: only the page is read.
    const candidates = judged ? listed : listed.slice(offset, offset + limit);
    const found: SearchItem[] = [];
    let skipped = judged ? 0 : offset;
    for (let i = 0; i < candidates.length && found.length < limit; i += CONCURRENCY) {
      const chunk = candidates.slice(i, i + CONCURRENCY);
      const files = await pool(chunk, CONCURRENCY, (c) => this.#readItem(c.path));
      for (const [j, read] of files.entries()) {
        // Gone since the listing (deleted by someone else): not an item any more.
        if (read === null) continue;
        const { value } = read.file;
        if (judged && !((filter === undefined || matchesFilter(value, filter)) && matchesQuery(value, words))) continue;
        if (skipped < offset) {
          skipped += 1;
          continue;
        }
        const { namespace, key } = chunk[j]!;
        found.push({ ...itemOf(namespace, key, read.file), score: undefined });
        if (found.length === limit) break;
      }
    }
    return found;
  }

  async #listNamespaces(step: Extract<Step, { kind: "list" }>): Promise<string[][]> {
    const { conditions, maxDepth, limit, offset } = step;
    // The labels every match must start with name a folder: only that folder is walked.
    const prefix: string[] = [];
    const first = conditions.find((c) => c.matchType === "prefix")?.path ?? [];
    for (const label of first) {
      if (label === "*" || !isLabel(label)) break;
      prefix.push(label);
    }
    // A prefix beside this store's namespace matches nothing it holds.
    if (!startsWith(prefix, this.#root) && !startsWith(this.#root, prefix)) return [];
    const seen = new Map<string, string[]>();
    for (const { namespace } of await this.#walk(this.#deeper(prefix))) {
      if (!conditions.every((c) => matchesCondition(namespace, c))) continue;
      const kept = maxDepth === undefined ? namespace : namespace.slice(0, maxDepth);
      seen.set(kept.join(":"), kept);
    }
    const sorted = [...seen.values()].sort(compareNamespaces);
    return sorted.slice(offset, limit === undefined ? undefined : offset + limit);
  }

  /**
   * Every item file below a namespace prefix (one within this store's
   * namespace), page by page (1,000 names a request), at most `scanLimit` files.
   */
  async #walk(prefix: string[]): Promise<Listed[]> {
    const listed: Listed[] = [];
    let files = 0;
    try {
      for await (const entry of this.#cap.list(this.#folderPath(prefix), { depth: 0 })) {
        if (++files > this.#scanLimit)
          throw new CapStoreError(
            "scan_limit",
            `more than ${this.#scanLimit} files below; narrow the namespace or raise scanLimit`,
            this.#folderPath(prefix),
          );
        if (entry.type !== "file") continue;
        const parts = entry.name.split("/");
        const key = keyOfFileName(parts.pop()!);
        const namespace = [...prefix, ...parts];
        // Not a name CapStore writes (a person's notes.txt, a folder no label makes): not an item.
        if (key === null || namespace.length === 0 || !parts.every(isLabel)) continue;
        listed.push({ namespace, key, path: this.#itemPath(namespace, key) });
      }
    } catch (error) {
      // No such folder: nothing was ever put below it, or its last item went (and the folder with it).
      if (isCapError(error) && error.code === "not_found") return [];
      throw error;
    }
    return listed;
  }

  /** An item's file and its etag, or null if there is none. */
  async #readItem(path: string): Promise<{ file: ItemFile; etag: string } | null> {
    let bytes: ArrayBuffer;
    let etag: string;
    try {
      const read = await this.#cap.readStream(path);
      if (read.notModified) throw new Error("unreachable: no ifNoneMatch was sent");
      etag = read.meta.etag;
      bytes = await new Response(read.body).arrayBuffer();
    } catch (error) {
      if (isCapError(error) && error.code === "not_found") return null;
      throw error;
    }
    return { file: parseItem(bytes, path), etag };
  }

  async #put(step: PutStep, value: Record<string, unknown>): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      // Read first: an update keeps createdAt, and a file that does not read as an item is never overwritten.
      const existing = await this.#readItem(step.path);
      const now = new Date();
      const before = existing && new Date(existing.file.updatedAt);
      const file: ItemFile = {
        format: 1,
        value,
        createdAt: existing ? new Date(existing.file.createdAt).toISOString() : now.toISOString(),
        // Never before the last update, even when the writer before had a clock ahead of this one.
        updatedAt: (before && before > now ? before : now).toISOString(),
      };
      try {
        // One whole file, written only over the one just read: the vault keeps the old or the new, never half.
        await this.#cap.write(step.path, `${JSON.stringify(file, null, 2)}\n`, {
          contentType: "application/json",
          ...(existing ? { ifMatch: existing.etag } : { ifNoneMatch: "*" }),
        });
        return;
      } catch (error) {
        if (!(isCapError(error) && error.code === "precondition_failed") || attempt >= this.#attempts) throw error;
      }
    }
  }

  async #delete(step: PutStep): Promise<void> {
    try {
      await this.#cap.delete(step.path);
    } catch (error) {
      if (isCapError(error) && error.code === "not_found") return;
      throw error;
    }
    // The vault keeps an emptied folder; a namespace without items is not one, so its folders go while empty.
    for (let depth = step.namespace.length; depth > this.#root.length; depth--) {
      try {
        await this.#cap.removeFolder(this.#folderPath(step.namespace.slice(0, depth)));
      } catch (error) {
        if (isCapError(error) && (error.code === "conflict" || error.code === "not_found")) return;
        throw error;
      }
    }
  }

  /** The folder of a namespace within this store's (which is `folder` itself). */
  #folderPath(labels: readonly string[]): string {
    return [this.#folder, ...labels.slice(this.#root.length)].filter((s) => s !== "").join("/");
  }

  #within(namespace: readonly string[]): void {
    if (!startsWith(namespace, this.#root))
      throw new CapStoreError(
        "outside_namespace",
        `${JSON.stringify(namespace)} is not within this store's namespace ${JSON.stringify(this.#root)}`,
      );
  }

  /** Of a prefix and this store's namespace, the one within the other. */
  #deeper(prefix: string[]): string[] {
    return startsWith(prefix, this.#root) ? prefix : [...this.#root];
  }

  #itemPath(namespace: readonly string[], key: string): string {
    const folder = this.#folderPath(namespace);
    return folder === "" ? itemFileName(key) : `${folder}/${itemFileName(key)}`;
  }
}

function startsWith(namespace: readonly string[], prefix: readonly string[]): boolean {
  return prefix.length <= namespace.length && prefix.every((label, i) => namespace[i] === label);
}

function itemOf(namespace: string[], key: string, file: ItemFile): Item {
  return {
    value: file.value,
    key,
    namespace: [...namespace],
    createdAt: new Date(file.createdAt),
    updatedAt: new Date(file.updatedAt),
  };
}

/** An item's file as stored, or a CapStoreError naming its path: never skipped, never guessed at. */
function parseItem(bytes: ArrayBuffer, path: string): ItemFile {
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes));
  } catch {
    throw new CapStoreError("corrupt_file", "not a CapStore item: not UTF-8 JSON", path);
  }
  const file = parsed as Partial<ItemFile> | null;
  const why =
    typeof file !== "object" || file === null || Array.isArray(file)
      ? "not a JSON object"
      : file.format !== 1
        ? `format ${JSON.stringify(file.format)} is not one this CapStore reads (1)`
        : typeof file.value !== "object" || file.value === null || Array.isArray(file.value)
          ? "its value is not a JSON object"
          : !isDate(file.createdAt) || !isDate(file.updatedAt)
            ? "createdAt and updatedAt must be ISO 8601 dates"
            : null;
  if (why !== null) throw new CapStoreError("corrupt_file", `not a CapStore item: ${why}`, path);
  return file as ItemFile;
}

function isDate(value: unknown): value is string {
  return typeof value === "string" && !Number.isNaN(Date.parse(value));
}

/** A value CapStore can keep as the JSON object it reads back. */
function checkValue(value: unknown): void {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new CapStoreError("invalid_value", "a value must be a JSON object (null deletes)");
  try {
    JSON.stringify(value);
  } catch (error) {
    throw new CapStoreError("invalid_value", `a value must be JSON: ${(error as Error).message}`);
  }
}

function count(name: string, value: unknown, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  if (!Number.isSafeInteger(value) || (value as number) < 0)
    throw new RangeError(`${name} must be a non-negative integer (got ${String(value)})`);
  return value as number;
}

/** `fn` over `items`, at most `limit` at once, answers in order. */
async function pool<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return out;
}
