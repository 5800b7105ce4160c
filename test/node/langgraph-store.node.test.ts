/**
 * CapStore (clients/langgraph/cap-store.ts) against LangGraph's own
 * InMemoryStore (@langchain/langgraph-checkpoint 1.2.2), side by side: seeded
 * random sequences of calls (get, put, delete, search, listNamespaces, and
 * batches of their operations) on both, on R2 and on disk, every answer
 * compared after every call. Everything is compared exactly but timestamps,
 * which must be present and ordered (createdAt ≤ updatedAt; an update keeps
 * createdAt, updatedAt never goes back), since the clocks are not the same.
 *
 * Where CapStore answers otherwise on purpose (docs/langgraph.md), each is
 * tested on its own below, run on both stores. In the sequences the
 * reference is InMemoryStore with the first three and the last applied
 * (`referenceCall`); the others are never generated there.
 *
 * | what                           | InMemoryStore                           | CapStore                                         |
 * | ------------------------------ | --------------------------------------- | ------------------------------------------------ |
 * | search order                   | namespace creation, then item insertion | by namespace (as listNamespaces sorts), then key |
 * | search `query`                 | ignored without an index                | plain-text match: every word, any case           |
 * | a namespace with no items left | still listed (so is one a delete named) | not listed: its folders go with its last item    |
 * | a label with / \ controls, ~x  | kept                                    | InvalidNamespaceError, before any request        |
 * | the empty key                  | kept                                    | CapStoreError invalid_key, before any request    |
 * | a value                        | kept as given (a Date, a string)        | a JSON object, read back as JSON                 |
 * | maxDepth < 1, limit/offset < 0 | slice arithmetic (maxDepth 0: [""])     | RangeError, before any request                   |
 * | batch puts [a] b:c and [a,b] c | one lost (both are a:b:c to it)         | both kept                                        |
 * | batch: a get, then a put of it | the get's item, changed by the put      | the item as it was before the batch              |
 *
 * Reproduce a failure: LANGGRAPH_STORE_SEED=<seed> npx vitest run --project node test/node/langgraph-store.node.test.ts
 */
import {
  type BaseStore,
  InMemoryStore,
  InvalidNamespaceError,
  type Item,
  type Operation,
  type SearchItem,
} from "@langchain/langgraph-checkpoint";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CapStore, CapStoreError } from "../../clients/langgraph/index.ts";
import { FsCap } from "../../clients/typescript/index.ts";
import { seededRandom } from "../seeded-random.ts";
import { type SharedVault, sharedVault } from "./shared-vault.ts";
import { startTestVault, type TestVault } from "./test-vault.ts";

// Per backend.
const SEQUENCES = 40;
const CALLS = 25;
const SEED = Number(process.env.LANGGRAPH_STORE_SEED || 36);

let vault: SharedVault;
// Booted while the other tests run: only the oversized value needs it.
let smallVault: Promise<TestVault>;
beforeAll(async () => {
  smallVault = startTestVault({ args: ["--max-file-bytes", "4096"] });
  // Not left unhandled if the file ends before a test awaits it.
  smallVault.catch(() => undefined);
  vault = await sharedVault("langgraph-store");
});
afterAll(async () => {
  await (await smallVault.catch(() => undefined))?.stop();
});

type Call =
  | { method: "get" | "delete"; namespace: string[]; key: string }
  | { method: "put"; namespace: string[]; key: string; value: Record<string, unknown> }
  | {
      method: "search";
      prefix: string[];
      options: { filter?: Record<string, unknown>; limit?: number; offset?: number; query?: string };
    }
  | {
      method: "listNamespaces";
      options: { prefix?: string[]; suffix?: string[]; maxDepth?: number; limit?: number; offset?: number };
    }
  | { method: "batch"; ops: Operation[] };

const NAMESPACES = [
  ["users", "u1"],
  ["users", "u2"],
  ["users", "u1", "notes"],
  ["docs"],
  ["docs", "v1"],
  ["é"],
  ["team a", "*"],
  ["Zeta"],
];
// Both refuse these (LangGraph's own rules): the error is compared too.
const BAD_NAMESPACES = [[".."], ["a.b"], ["x:y"], [""], []];
const KEYS = ["k1", "k2", "K1", "note 1", "é", "a/b", "50%", "..", ".hidden", "t:1", "~x", "0"];
const WORDS = ["tea", "coffee", "Green tea", "Earl Grey", "oolong", "café", "TEA time"];
const FILTERS: (Record<string, unknown> | undefined)[] = [
  undefined,
  {},
  { kind: "a" },
  { kind: "b", flag: true },
  { n: { $gt: 2 } },
  { n: { $gte: 1, $lte: 3 } },
  { n: { $lt: 2 } },
  { kind: { $ne: "a" } },
  { kind: { $in: ["a", "c"] } },
  { kind: { $nin: ["a"] } },
  { missing: { $ne: 1 } },
  { tags: ["tea"] },
  { tags: [] },
  { n: {} },
  { flag: false },
  { n: 3 },
  { n: "3" },
  { n: { $eq: 3 } },
  { n: { $gt: "2" } },
  { nested: { deep: "tea" } },
];
const QUERIES = [undefined, undefined, "", "tea", "TEA", "green tea", "café", "nothing-here", "3", "true"];
const PREFIXES = [[], ["users"], ["users", "u1"], ["docs"], ["nope"], ["é"], ["team a"], ["users", "u1", "notes"]];
const LIST_PREFIXES = [undefined, [], ["users"], ["users", "*"], ["*", "u1"], ["docs"], ["nope"], ["*"]];
const LIST_SUFFIXES = [undefined, undefined, ["notes"], ["u1"], ["*"], ["v1"], ["*", "notes"]];

function sequence(seed: number): Call[] {
  const next = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const maybe = <T>(value: T, p = 0.5): T | undefined => (next() < p ? value : undefined);
  const namespace = () => (next() < 0.04 ? pick(BAD_NAMESPACES) : pick(NAMESPACES));
  const value = (): Record<string, unknown> => {
    const v: Record<string, unknown> = {};
    if (next() < 0.9) v.kind = pick(["a", "b", "c"]);
    if (next() < 0.8) v.n = Math.floor(next() * 6);
    if (next() < 0.6) v.flag = next() < 0.5;
    if (next() < 0.7) v.text = pick(WORDS);
    if (next() < 0.3) v.nested = { deep: pick(WORDS), list: [pick(WORDS), Math.floor(next() * 3)] };
    if (next() < 0.3) v.tags = [pick(WORDS)];
    return v;
  };
  const searchOptions = () => {
    const options: { filter?: Record<string, unknown>; limit?: number; offset?: number; query?: string } = {};
    const filter = pick(FILTERS);
    if (filter) options.filter = filter;
    const limit = maybe(pick([0, 1, 2, 3, 10, 50]));
    if (limit !== undefined) options.limit = limit;
    const offset = maybe(pick([0, 1, 2, 5]));
    if (offset !== undefined) options.offset = offset;
    const query = pick(QUERIES);
    if (query !== undefined) options.query = query;
    return options;
  };
  const listOptions = () => {
    const options: { prefix?: string[]; suffix?: string[]; maxDepth?: number; limit?: number; offset?: number } = {};
    const prefix = pick(LIST_PREFIXES);
    if (prefix) options.prefix = prefix;
    const suffix = pick(LIST_SUFFIXES);
    if (suffix) options.suffix = suffix;
    const maxDepth = maybe(pick([1, 2, 3]));
    if (maxDepth !== undefined) options.maxDepth = maxDepth;
    const limit = maybe(pick([1, 2, 100]));
    if (limit !== undefined) options.limit = limit;
    const offset = maybe(pick([0, 1, 3]));
    if (offset !== undefined) options.offset = offset;
    return options;
  };
  const operation = (): Operation => {
    switch (pick(["get", "get", "put", "put", "put", "delete", "search", "list"] as const)) {
      case "get":
        return { namespace: namespace(), key: pick(KEYS) };
      case "put":
        return { namespace: namespace(), key: pick(KEYS), value: value() };
      case "delete":
        return { namespace: namespace(), key: pick(KEYS), value: null };
      case "search": {
        const { filter, limit, offset, query } = searchOptions();
        return { namespacePrefix: pick(PREFIXES), filter, limit, offset, query };
      }
      case "list": {
        const { prefix, suffix, maxDepth, limit, offset } = listOptions();
        const matchConditions = [
          ...(prefix ? [{ matchType: "prefix" as const, path: prefix }] : []),
          ...(suffix ? [{ matchType: "suffix" as const, path: suffix }] : []),
        ];
        return { matchConditions, maxDepth, limit: limit ?? 100, offset: offset ?? 0 };
      }
    }
  };
  const calls: Call[] = [];
  for (let i = 0; i < CALLS; i++) {
    switch (pick(["put", "put", "put", "get", "delete", "search", "search", "list", "batch", "batch"] as const)) {
      case "put":
        calls.push({ method: "put", namespace: namespace(), key: pick(KEYS), value: value() });
        break;
      case "get":
        calls.push({ method: "get", namespace: namespace(), key: pick(KEYS) });
        break;
      case "delete":
        calls.push({ method: "delete", namespace: namespace(), key: pick(KEYS) });
        break;
      case "search":
        calls.push({ method: "search", prefix: pick(PREFIXES), options: searchOptions() });
        break;
      case "list":
        calls.push({ method: "listNamespaces", options: listOptions() });
        break;
      case "batch": {
        const ops = Array.from({ length: 1 + Math.floor(next() * 4) }, operation);
        // The same key twice in one batch: a put then a get or another put of it.
        const last = ops.at(-1)!;
        if ("key" in last && next() < 0.5)
          ops.push(next() < 0.5 ? { namespace: last.namespace, key: last.key } : { ...last, value: value() });
        calls.push({ method: "batch", ops });
        break;
      }
    }
  }
  // What each sequence left, all of it.
  calls.push({ method: "search", prefix: [], options: { limit: 1000 } });
  calls.push({ method: "listNamespaces", options: {} });
  return calls;
}

type Answer = { ok: true; result: unknown } | { ok: false; error: string };

async function answer(run: () => Promise<unknown>): Promise<Answer> {
  try {
    return { ok: true, result: await run() };
  } catch (error) {
    return { ok: false, error: (error as Error).name };
  }
}

function callOn(store: InMemoryStore | CapStore, call: Call): Promise<unknown> {
  switch (call.method) {
    case "get":
      return store.get(call.namespace, call.key);
    case "put":
      return store.put(call.namespace, call.key, call.value);
    case "delete":
      return store.delete(call.namespace, call.key);
    case "search":
      return store.search(call.prefix, call.options);
    case "listNamespaces":
      return store.listNamespaces(call.options);
    case "batch":
      return (store as BaseStore).batch(call.ops);
  }
}

// The reference: InMemoryStore with CapStore's documented differences applied.

/** CapStore's search order: namespaces as InMemoryStore's listNamespaces sorts them, then keys. */
const collate = (a: string, b: string) => a.localeCompare(b) || (a < b ? -1 : a > b ? 1 : 0);
const byPlace = (a: Item, b: Item) => collate(a.namespace.join(":"), b.namespace.join(":")) || collate(a.key, b.key);

/** CapStore's plain-text query, written out again: every word in the text of the value's leaves. */
function queryMatches(value: unknown, query: string | undefined): boolean {
  const words = (query ?? "").toLowerCase().split(/\s+/).filter(Boolean);
  const leaves: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") leaves.push(String(v).toLowerCase());
    else if (v && typeof v === "object") Object.values(v).forEach(walk);
  };
  walk(value);
  return words.every((w) => leaves.join("\n").includes(w));
}

const ALL = 1_000_000;
/** A search as the reference answers it: every match by InMemoryStore's own filter, then CapStore's query, order and page. */
function page(all: SearchItem[], options: { limit?: number; offset?: number; query?: string }): SearchItem[] {
  const offset = options.offset ?? 0;
  const limit = options.limit ?? 10;
  return all
    .filter((item) => queryMatches(item.value, options.query))
    .sort(byPlace)
    .slice(offset, offset + limit);
}

/** InMemoryStore keeps a namespace's map once its last item is gone; CapStore has no such namespace. */
function prune(store: InMemoryStore): void {
  const data = (store as unknown as { data: Map<string, Map<string, unknown>> }).data;
  for (const [namespace, items] of data) if (items.size === 0) data.delete(namespace);
}

async function referenceCall(store: InMemoryStore, call: Call): Promise<unknown> {
  try {
    if (call.method === "search") {
      const all = await store.search(call.prefix, { filter: call.options.filter, limit: ALL, offset: 0 });
      return page(all, call.options);
    }
    if (call.method === "batch") {
      // Its reads first, each put asked as a get (judged as the put is), then its puts: so an item a get answered
      // is copied before a put of the batch changes it in place.
      const reads = call.ops.map((op) =>
        "namespacePrefix" in op
          ? { ...op, limit: ALL, offset: 0, query: undefined }
          : "value" in op
            ? { namespace: op.namespace, key: op.key }
            : op,
      );
      const results = ((await store.batch(reads)) as unknown[]).map((result, i) => {
        const op = call.ops[i]!;
        if ("value" in op) return null;
        if ("namespacePrefix" in op) return page(result as SearchItem[], op);
        return result && typeof result === "object" && "key" in result ? { ...result } : result;
      });
      await store.batch(call.ops.filter((op) => "value" in op));
      return results;
    }
    return await callOn(store, call);
  } finally {
    prune(store);
  }
}

/** What must be equal: everything but the dates, which are checked for order by `Lives`. */
function comparable(result: unknown, dates: Item[]): unknown {
  if (Array.isArray(result)) return result.map((r) => comparable(r, dates));
  if (result && typeof result === "object" && "createdAt" in result) {
    const { createdAt: _c, updatedAt: _u, ...rest } = result as Item;
    dates.push(result as Item);
    return rest;
  }
  return result;
}

/**
 * The dates an item was last seen with, on both sides. An item's life is the
 * reference's createdAt object (InMemoryStore keeps it on update, makes a new
 * one when a deleted key is put again), so CapStore's createdAt must stay put
 * exactly as long as the reference's does.
 */
class Lives {
  readonly #seen = new Map<string, { ref: Date; created: number; updated: number }>();

  check(capItem: Item, refItem: Item, where: string): void {
    for (const item of [capItem, refItem]) {
      expect(item.createdAt, where).toBeInstanceOf(Date);
      expect(item.updatedAt, where).toBeInstanceOf(Date);
      expect(item.createdAt.getTime(), where).toBeLessThanOrEqual(item.updatedAt.getTime());
    }
    const id = JSON.stringify([refItem.namespace, refItem.key]);
    const before = this.#seen.get(id);
    const created = capItem.createdAt.getTime();
    const updated = capItem.updatedAt.getTime();
    if (before && before.ref === refItem.createdAt) {
      expect(created, `${where}: createdAt kept`).toBe(before.created);
      expect(updated, `${where}: updatedAt never back`).toBeGreaterThanOrEqual(before.updated);
    } else if (before) {
      expect(created, `${where}: put again after its delete`).toBeGreaterThanOrEqual(before.updated);
    }
    this.#seen.set(id, { ref: refItem.createdAt, created, updated });
  }
}

const backends = [
  ["R2", () => vault.rootCapUrl],
  ["disk", () => vault.diskCapUrl],
] as const;

describe.each(backends)("CapStore on %s as InMemoryStore", (backend, rootUrl) => {
  it(`answers ${SEQUENCES} seeded sequences of ${CALLS} calls as InMemoryStore does (seed ${SEED})`, async () => {
    const run = async (s: number) => {
      const child = await new FsCap(rootUrl()).subdir({ path: `seq-${SEED}-${s}` });
      // Half over a folder of the cap, half over its root; half given a URL, half an FsCap.
      const cap = s % 2 ? child : child.url;
      const store = new CapStore(cap, s % 4 < 2 ? { folder: "memories" } : {});
      const reference = new InMemoryStore();
      const lives = new Lives();
      for (const [i, call] of sequence(SEED * 1000 + s).entries()) {
        const expected = await answer(() => referenceCall(reference, call));
        const got = await answer(() => callOn(store, call));
        const where = `${backend}, seed ${SEED}, sequence ${s}, call ${i}: ${JSON.stringify(call)}`;
        const gotDates: Item[] = [];
        const expectedDates: Item[] = [];
        const shape = (a: Answer, dates: Item[]) => (a.ok ? { ok: true, result: comparable(a.result, dates) } : a);
        const [g, e] = [shape(got, gotDates), shape(expected, expectedDates)];
        expect(g, where).toStrictEqual(e);
        for (const [j, item] of gotDates.entries()) lives.check(item, expectedDates[j]!, where);
      }
    };
    const LANES = 6;
    await Promise.all(
      Array.from({ length: LANES }, async (_, lane) => {
        for (let s = lane; s < SEQUENCES; s += LANES) await run(s);
      }),
    );
  });
});

async function refusal(call: Promise<unknown>): Promise<string> {
  try {
    await call;
    return "ok";
  } catch (error) {
    const e = error as { name: string; code?: string };
    return e.code ? `${e.name} ${e.code}` : e.name;
  }
}

describe.each(backends)("CapStore on %s", (_backend, rootUrl) => {
  const fresh = async () => new FsCap(rootUrl()).subdir({ path: `t-${crypto.randomUUID()}` });

  it("keeps an item as <key>.json in its namespace's folder, readable JSON; an update keeps createdAt", async () => {
    const fs = await fresh();
    const store = new CapStore(fs.url, { folder: "memories" });
    await store.put(["users", "alice"], "prefs", { theme: "dark" });
    const text = await fs.readText("memories/users/alice/prefs.json");
    const file = JSON.parse(text);
    expect(file).toEqual({ format: 1, value: { theme: "dark" }, createdAt: file.createdAt, updatedAt: file.createdAt });
    expect(text).toBe(`${JSON.stringify(file, null, 2)}\n`);
    const first = (await store.get(["users", "alice"], "prefs"))!;
    expect(first.createdAt.toISOString()).toBe(file.createdAt);
    await new Promise((resolve) => setTimeout(resolve, 5));
    await store.put(["users", "alice"], "prefs", { theme: "light" });
    const second = (await store.get(["users", "alice"], "prefs"))!;
    expect(second.value).toEqual({ theme: "light" });
    expect(second.createdAt).toEqual(first.createdAt);
    expect(second.updatedAt.getTime()).toBeGreaterThan(first.updatedAt.getTime());
  });

  it("a key keeps its spelling as a file name but for what a name cannot hold, percent-encoded", async () => {
    const fs = await fresh();
    const store = new CapStore(fs);
    const keys = ["notes/2026 draft", ".hidden", "..", "50%", "tab\there", "back\\slash", "é ü", "~x", "a:b*?"];
    for (const key of keys) await store.put(["k"], key, { key });
    const names = (await fs.listPage("k")).entries.map((e) => e.name).sort();
    expect(names).toEqual(
      [
        "notes%2F2026 draft.json",
        "%2Ehidden.json",
        "%2E..json",
        "50%25.json",
        "tab%09here.json",
        "back%5Cslash.json",
        "é ü.json",
        "~x.json",
        "a:b*?.json",
      ].sort(),
    );
    for (const key of keys) expect((await store.get(["k"], key))?.value).toEqual({ key });
    expect((await store.search(["k"], { limit: 100 })).map((i) => i.key).sort()).toEqual([...keys].sort());
  });

  it("finds only what it writes: a person's other files and names it never makes are not items", async () => {
    const fs = await fresh();
    const store = new CapStore(fs);
    await store.put(["users", "alice"], "a", { n: 1 });
    await fs.write("users/alice/README.txt", "notes for people");
    await fs.write("users/alice/a%41.json", "{}"); // not how "aA" is spelled: get would never find it
    await fs.write("users/bad.name/x.json", "{}"); // no label holds a "."
    await fs.write("top.json", "{}"); // no namespace is empty
    expect((await store.search([])).map((i) => [i.namespace, i.key])).toEqual([[["users", "alice"], "a"]]);
    expect(await store.listNamespaces()).toEqual([["users", "alice"]]);
  });

  it("deleting a namespace's last item removes its emptied folders, never the store's folder or a folder in use", async () => {
    const fs = await fresh();
    const store = new CapStore(fs, { folder: "mem" });
    await store.put(["a", "b", "c"], "k", { v: 1 });
    await store.put(["a", "x"], "k", { v: 1 });
    await store.delete(["a", "b", "c"], "k");
    expect((await fs.listPage("mem/a")).entries.map((e) => e.name)).toEqual(["x"]);
    await store.delete(["a", "x"], "k");
    expect((await fs.listPage("mem")).entries).toEqual([]);
    expect(await store.listNamespaces()).toEqual([]);
    await store.delete(["a", "x"], "k"); // nothing there: nothing to do
  });

  it("a read-only child cap gets, searches and lists; put and delete are refused (forbidden), nothing changed", async () => {
    const fs = await fresh();
    const owner = new CapStore(fs);
    await owner.put(["users", "alice"], "prefs", { theme: "dark" });
    const viewer = new CapStore(await new FsCap(fs.url).subdir({ path: "", rights: ["read", "list"] }));
    expect((await viewer.get(["users", "alice"], "prefs"))?.value).toEqual({ theme: "dark" });
    expect((await viewer.search(["users"], { filter: { theme: "dark" } })).map((i) => i.key)).toEqual(["prefs"]);
    expect(await viewer.listNamespaces()).toEqual([["users", "alice"]]);
    expect(await refusal(viewer.put(["users", "alice"], "prefs", { theme: "light" }))).toBe("CapError forbidden");
    expect(await refusal(viewer.put(["users", "bob"], "prefs", { theme: "light" }))).toBe("CapError forbidden");
    expect(await refusal(viewer.delete(["users", "alice"], "prefs"))).toBe("CapError forbidden");
    expect((await owner.get(["users", "alice"], "prefs"))?.value).toEqual({ theme: "dark" });
    expect(await owner.listNamespaces()).toEqual([["users", "alice"]]);
  });

  it("one namespace shared: a child cap on its folder, with `namespace`, holds it and those below it, named in full", async () => {
    const fs = await fresh();
    const owner = new CapStore(fs, { folder: "memory" });
    await owner.put(["users", "alice"], "prefs", { theme: "dark" });
    await owner.put(["users", "alice", "notes"], "n1", { text: "tea" });
    await owner.put(["users", "bob"], "prefs", { theme: "light" });
    const sent: string[] = [];
    const spy = (input: string, init?: RequestInit) => {
      sent.push(input);
      return fetch(input, init);
    };
    const readOnly = await fs.subdir({ path: "memory/users/alice", rights: ["read", "list"] });
    const viewer = new CapStore(readOnly.url, { namespace: ["users", "alice"], fetch: spy });
    expect((await viewer.get(["users", "alice"], "prefs"))?.value).toEqual({ theme: "dark" });
    const alices = [
      [["users", "alice"], "prefs"],
      [["users", "alice", "notes"], "n1"],
    ];
    for (const prefix of [[], ["users"], ["users", "alice"]])
      expect((await viewer.search(prefix)).map((i) => [i.namespace, i.key])).toEqual(alices);
    expect((await viewer.search(["users", "alice", "notes"])).map((i) => i.key)).toEqual(["n1"]);
    expect(await viewer.listNamespaces()).toEqual([
      ["users", "alice"],
      ["users", "alice", "notes"],
    ]);
    expect(await viewer.listNamespaces({ prefix: ["users", "bob"] })).toEqual([]);
    expect(await viewer.listNamespaces({ suffix: ["notes"], maxDepth: 2 })).toEqual([["users", "alice"]]);
    const before = sent.length;
    expect(await refusal(viewer.get(["users", "bob"], "prefs"))).toBe("CapStoreError outside_namespace");
    expect(await refusal(viewer.search(["users", "bob"]))).toBe("CapStoreError outside_namespace");
    expect(await refusal(viewer.put(["other"], "k", { v: 1 }))).toBe("CapStoreError outside_namespace");
    expect(sent.length).toBe(before);
    expect(await refusal(viewer.put(["users", "alice"], "prefs", { theme: "light" }))).toBe("CapError forbidden");
    // A writable one writes where the owner reads; its deletes tidy below its own folder, never the folder itself.
    const writer = new CapStore(await fs.subdir({ path: "memory/users/alice" }), { namespace: ["users", "alice"] });
    await writer.put(["users", "alice"], "new", { v: 1 });
    expect((await owner.get(["users", "alice"], "new"))?.value).toEqual({ v: 1 });
    for (const [ns, key] of [...alices, [["users", "alice"], "new"]] as [string[], string][])
      await writer.delete(ns, key);
    expect((await fs.listPage("memory/users/alice")).entries).toEqual([]);
    expect(await owner.listNamespaces()).toEqual([["users", "bob"]]);
  });

  it("a revoked cap refuses every call with no_such_cap", async () => {
    const child = await (await fresh()).subdir({ path: "" });
    const store = new CapStore(child.url);
    await store.put(["users", "alice"], "prefs", { theme: "dark" });
    await child.revoke();
    expect(await refusal(store.get(["users", "alice"], "prefs"))).toBe("CapError no_such_cap");
    expect(await refusal(store.put(["users", "alice"], "prefs", {}))).toBe("CapError no_such_cap");
    expect(await refusal(store.delete(["users", "alice"], "prefs"))).toBe("CapError no_such_cap");
    expect(await refusal(store.search(["users"]))).toBe("CapError no_such_cap");
    expect(await refusal(store.listNamespaces())).toBe("CapError no_such_cap");
  });

  it("refuses a label or key it cannot keep, with a typed error, before any request", async () => {
    const fs = await fresh();
    const sent: string[] = [];
    const store = new CapStore(fs.url, {
      fetch: (input, init) => {
        sent.push(String(input));
        return fetch(input, init);
      },
    });
    const labels = ["a/b", "a\\b", "..", ".", "", "a.b", "a:b", "a\nb", "a\u0000", "a\u2028", "~home", "\ud800"];
    for (const label of [...labels, "é".repeat(128)]) {
      const ns = ["users", label];
      for (const call of [
        store.put(ns, "k", { v: 1 }),
        store.get(ns, "k"),
        store.delete(ns, "k"),
        store.search(ns),
        // A good put first: the bad operation after it stops the whole batch before any request.
        store.batch([
          { namespace: ["ok"], key: "k", value: { v: 1 } },
          { namespace: ns, key: "k", value: { v: 1 } },
        ]),
      ])
        expect(await refusal(call), JSON.stringify(label)).toBe("InvalidNamespaceError");
    }
    expect(await refusal(store.put([], "k", { v: 1 }))).toBe("InvalidNamespaceError");
    // LangGraph's own error class, so code that catches it for InMemoryStore catches it here.
    expect(await store.get(["a/b"], "k").catch((e: unknown) => e)).toBeInstanceOf(InvalidNamespaceError);
    for (const key of ["", "x".repeat(251), "\udc00", 42 as unknown as string]) {
      expect(await refusal(store.put(["ok"], key, { v: 1 })), JSON.stringify(key)).toBe("CapStoreError invalid_key");
      expect(await refusal(store.get(["ok"], key))).toBe("CapStoreError invalid_key");
    }
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    for (const value of ["text", [1, 2], { big: 1n }, circular])
      expect(await refusal(store.put(["ok"], "k", value as never))).toBe("CapStoreError invalid_value");
    expect(await refusal(store.search(["ok"], { limit: -1 }))).toBe("RangeError");
    expect(await refusal(store.listNamespaces({ maxDepth: 0 }))).toBe("RangeError");
    expect(sent).toEqual([]);
    // The longest key that fits: 250 bytes and `.json`.
    await store.put(["ok"], "x".repeat(250), { v: 1 });
    expect(sent.length).toBeGreaterThan(0);
  });

  it("a corrupted item file is a CapStoreError naming its path; it is never overwritten, and a delete removes it", async () => {
    const fs = await fresh();
    const store = new CapStore(fs, { folder: "mem" });
    await store.put(["users", "alice"], "good", { v: 1 });
    for (const [key, text] of [
      ["bad", "not json {"],
      [
        "old",
        JSON.stringify({ format: 2, value: {}, createdAt: "2026-01-01T00:00:00Z", updatedAt: "2026-01-01T00:00:00Z" }),
      ],
      ["odd", JSON.stringify({ format: 1, value: "text", createdAt: "2026-01-01T00:00:00Z", updatedAt: "x" })],
    ] as const) {
      const path = `mem/users/alice/${key}.json`;
      await fs.write(path, text);
      const error = await store.get(["users", "alice"], key).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CapStoreError);
      expect(error).toMatchObject({ code: "corrupt_file", path });
      expect((error as Error).message).toContain(path);
      expect(await refusal(store.search(["users"], { filter: { v: 1 } }))).toBe("CapStoreError corrupt_file");
      expect(await refusal(store.put(["users", "alice"], key, { v: 2 }))).toBe("CapStoreError corrupt_file");
      expect(await fs.readText(path)).toBe(text);
      await store.delete(["users", "alice"], key);
      expect(await store.get(["users", "alice"], key)).toBeNull();
    }
    expect((await store.search(["users"])).map((i) => i.key)).toEqual(["good"]);
  });

  it("scanLimit bounds a walk: past it, a scan_limit CapStoreError rather than a walk without end", async () => {
    const fs = await fresh();
    const store = new CapStore(fs, { scanLimit: 3 });
    for (const key of ["1", "2"]) await store.put(["a"], key, { v: 1 });
    for (const key of ["1", "2"]) await store.put(["b"], key, { v: 1 });
    expect(await refusal(store.search([]))).toBe("CapStoreError scan_limit");
    expect(await refusal(store.listNamespaces())).toBe("CapStoreError scan_limit");
    expect((await store.search(["a"])).length).toBe(2);
    expect(await store.listNamespaces({ prefix: ["b"] })).toEqual([["b"]]);
  });

  it("stores putting one key at once: every put lands whole, one after another, and createdAt stays the first's", async () => {
    const fs = await fresh();
    await new CapStore(fs).put(["race"], "k", { n: -1 });
    const created = (await new CapStore(fs).get(["race"], "k"))!.createdAt;
    const values = Array.from({ length: 6 }, (_, n) => ({ n }));
    await Promise.all(values.map((value) => new CapStore(fs.url).put(["race"], "k", value)));
    const item = (await new CapStore(fs).get(["race"], "k"))!;
    expect(values).toContainEqual(item.value);
    expect(item.createdAt).toEqual(created);
    expect((await fs.versions("race/k.json")).versions.length).toBe(7);
  });
});

/**
 * On a vault of its own, whose largest file is 4 KiB: a value past it is
 * refused whole, its body read and dropped. (Past the shared vault's 100 MiB
 * the vault cuts the upload, and the client may see the cut, `unavailable`.)
 */
describe("an oversized value", () => {
  let small: TestVault;
  beforeAll(async () => {
    small = await smallVault;
  });

  it.each(["r2", "disk"] as const)(
    "on %s is the vault's too_large (CapError), the item as it was, nothing half-written",
    async (backend) => {
      const fs = await new FsCap(backend === "r2" ? small.rootCapUrl : small.diskCapUrl).subdir({
        path: `big-${crypto.randomUUID()}`,
      });
      const store = new CapStore(fs);
      await store.put(["big"], "k", { v: 1 });
      const huge = { v: "x".repeat(8192) };
      expect(await refusal(store.put(["big"], "k", huge))).toBe("CapError too_large");
      expect(await refusal(store.put(["big"], "new", huge))).toBe("CapError too_large");
      expect(await refusal(store.batch([{ namespace: ["big"], key: "k", value: huge }]))).toBe("CapError too_large");
      expect((await store.get(["big"], "k"))?.value).toEqual({ v: 1 });
      expect(await store.get(["big"], "new")).toBeNull();
      expect((await fs.listPage("big")).entries.map((e) => e.name)).toEqual(["k.json"]);
      expect((await fs.versions("big/k.json")).versions.length).toBe(1);
    },
  );
});

describe("CapStore in a real LangGraph graph", () => {
  it("a node's memories, put through config.store, are found by a later run and are files in the vault", async () => {
    const { Annotation, StateGraph } = await import("@langchain/langgraph");
    const State = Annotation.Root({ user: Annotation<string>, said: Annotation<string>, known: Annotation<string[]> });
    const fs = await new FsCap(vault.rootCapUrl).subdir({ path: `g-${crypto.randomUUID()}` });
    const graph = new StateGraph(State)
      .addNode("remember", async (s, config) => {
        const store = config.store!;
        await store.put(["users", s.user, "memories"], s.said, { text: s.said });
        return { known: (await store.search(["users", s.user, "memories"])).map((m) => m.value.text as string) };
      })
      .addEdge("__start__", "remember")
      .compile({ store: new CapStore(fs.url, { folder: "memory" }) });
    await graph.invoke({ user: "alice", said: "likes tea" });
    const later = await graph.invoke({ user: "alice", said: "lives in Lyon" });
    expect(later.known).toEqual(["likes tea", "lives in Lyon"]);
    const file = JSON.parse(await fs.readText("memory/users/alice/memories/likes tea.json"));
    expect(file.value).toEqual({ text: "likes tea" });
  });
});

/**
 * Where CapStore answers otherwise on purpose (the table at the top, and
 * docs/langgraph.md): each case run on both, each answer checked, so a change
 * on either side shows.
 */
describe("deliberate differences from InMemoryStore", () => {
  const both = async () => {
    const fs = await new FsCap(vault.rootCapUrl).subdir({ path: `d-${crypto.randomUUID()}` });
    return { fs, cap: new CapStore(fs), memory: new InMemoryStore() };
  };
  const keysOf = (items: Item[]) => items.map((i) => `${i.namespace.join("/")}:${i.key}`);

  it("search order: InMemoryStore's is insertion order; CapStore's is by namespace, then key", async () => {
    const { cap, memory } = await both();
    for (const store of [cap, memory]) {
      await store.put(["b"], "z", { v: 1 });
      await store.put(["a"], "y", { v: 1 });
      await store.put(["a"], "x", { v: 1 });
    }
    expect(keysOf(await memory.search([]))).toEqual(["b:z", "a:y", "a:x"]);
    expect(keysOf(await cap.search([]))).toEqual(["a:x", "a:y", "b:z"]);
    expect(keysOf(await cap.search([], { offset: 1, limit: 1 }))).toEqual(["a:y"]);
  });

  it("a query: InMemoryStore without an index ignores it; CapStore keeps the items holding every word", async () => {
    const { cap, memory } = await both();
    for (const store of [cap, memory]) {
      await store.put(["m"], "1", { text: "Likes green TEA", n: 3 });
      await store.put(["m"], "2", { text: "likes coffee", tea: false });
      await store.put(["m"], "3", { notes: ["green", { deep: "tea" }] });
    }
    expect(keysOf(await memory.search(["m"], { query: "green tea" }))).toEqual(["m:1", "m:2", "m:3"]);
    expect(keysOf(await cap.search(["m"], { query: "green tea" }))).toEqual(["m:1", "m:3"]);
    expect(keysOf(await cap.search(["m"], { query: "TEA 3" }))).toEqual(["m:1"]);
    expect(keysOf(await cap.search(["m"], { query: "  " }))).toEqual(["m:1", "m:2", "m:3"]);
    expect((await cap.search(["m"], { query: "coffee" }))[0]?.score).toBeUndefined();
  });

  it("a namespace with no items: InMemoryStore still lists it; CapStore does not, and its folder is gone", async () => {
    const { fs, cap, memory } = await both();
    for (const store of [cap, memory]) {
      await store.put(["gone"], "k", { v: 1 });
      await store.delete(["gone"], "k");
      await store.delete(["never"], "k");
    }
    expect(await memory.listNamespaces()).toEqual([["gone"], ["never"]]);
    expect(await cap.listNamespaces()).toEqual([]);
    expect((await fs.listPage("")).entries).toEqual([]);
  });

  it("labels with / \\ control characters or a leading ~, and the empty key: InMemoryStore keeps them; CapStore refuses", async () => {
    const { cap, memory } = await both();
    for (const label of ["a/b", "a\\b", "a\tb", "~home"]) {
      await memory.put([label], "k", { v: 1 });
      expect((await memory.get([label], "k"))?.value).toEqual({ v: 1 });
      expect(await refusal(cap.put([label], "k", { v: 1 }))).toBe("InvalidNamespaceError");
    }
    await memory.put(["ns"], "", { v: 1 });
    expect((await memory.get(["ns"], ""))?.value).toEqual({ v: 1 });
    expect(await refusal(cap.put(["ns"], "", { v: 1 }))).toBe("CapStoreError invalid_key");
  });

  it("values: InMemoryStore keeps what it is given; CapStore keeps a JSON object, read back as JSON", async () => {
    const { cap, memory } = await both();
    const value = { when: new Date(0), gone: undefined, list: [1, undefined] };
    await memory.put(["v"], "k", value);
    await cap.put(["v"], "k", value);
    expect((await memory.get(["v"], "k"))?.value).toBe(value);
    expect((await cap.get(["v"], "k"))?.value).toStrictEqual({ when: "1970-01-01T00:00:00.000Z", list: [1, null] });
    await memory.put(["v"], "s", "text" as never);
    expect((await memory.get(["v"], "s"))?.value).toBe("text");
    expect(await refusal(cap.put(["v"], "s", "text" as never))).toBe("CapStoreError invalid_value");
  });

  it("maxDepth below 1 and negative limits: InMemoryStore slices; CapStore refuses (RangeError)", async () => {
    const { cap, memory } = await both();
    for (const store of [cap, memory]) await store.put(["a", "b"], "k", { v: 1 });
    expect(await memory.listNamespaces({ maxDepth: 0 })).toEqual([[""]]);
    expect(await refusal(cap.listNamespaces({ maxDepth: 0 }))).toBe("RangeError");
    expect((await memory.search([], { offset: -1 })).length).toBe(1);
    expect(await refusal(cap.search([], { offset: -1 }))).toBe("RangeError");
  });

  it("two puts in one batch whose labels and key join to one `a:b:c`: InMemoryStore keeps one; CapStore both", async () => {
    const { cap, memory } = await both();
    const ops = [
      { namespace: ["a"], key: "b:c", value: { v: 1 } },
      { namespace: ["a", "b"], key: "c", value: { v: 2 } },
    ];
    for (const store of [cap, memory]) await (store as BaseStore).batch(ops);
    expect(await memory.get(["a"], "b:c")).toBeNull();
    expect((await cap.get(["a"], "b:c"))?.value).toEqual({ v: 1 });
    expect((await cap.get(["a", "b"], "c"))?.value).toEqual({ v: 2 });
  });

  it("a get then a put of its key in one batch: InMemoryStore's answer changes with the put; CapStore's is as it was", async () => {
    const { cap, memory } = await both();
    for (const store of [cap, memory]) await store.put(["a"], "k", { v: 1 });
    const ops = [
      { namespace: ["a"], key: "k" },
      { namespace: ["a"], key: "k", value: { v: 2 } },
    ];
    const [fromMemory] = (await memory.batch(ops)) as [Item | null];
    const [fromCap] = (await cap.batch(ops)) as [Item | null];
    expect(fromMemory?.value).toEqual({ v: 2 });
    expect(fromCap?.value).toEqual({ v: 1 });
    expect((await cap.get(["a"], "k"))?.value).toEqual({ v: 2 });
  });
});
