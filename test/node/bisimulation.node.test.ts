/**
 * Bisimulation: one contract, three implementations.
 *
 * Each random sequence of requests runs against the pure reference model
 * (test/model/vault-model.ts), an R2-backed root cap and a disk-backed root
 * cap, both served by the real launcher on Miniflare. Every observation must
 * be identical: status, error code, body, file bytes, validators, listings in
 * order, rights. R2 and disk are compared exactly (error messages included);
 * the model fixes the messages the contract fixes. Only what is per instance
 * by nature is normalised: tokens, urls and ids (mapped to the role of the
 * cap in the sequence), timestamps and the opaque list cursors, which each
 * implementation follows on its own.
 *
 * Versions are part of it: writes, deletes and moves record history, and
 * sequences list it, read, restore and redact versions through root and
 * child caps (the roots keep 1 to 3 versions per path, or the default). A
 * version's `actor` is a cap id, mapped to its role like every id, and `at`
 * a time; version ids and history cursors are compared as they are, since
 * each root's journal counts its own from 1.
 *
 * The sequences run as BISIM_STREAMS (2) seeded streams at once against the
 * one vault (each sequence has roots of its own), so the file's wall time is
 * not one request after another; BISIM_RUNS (100) sequences in all.
 *
 * Reproduce a failure (the message names the failing stream's seed and size):
 * BISIM_SEED=<seed> BISIM_STREAMS=1 BISIM_RUNS=<runs> npx vitest run --config vitest.node.config.ts test/node/bisimulation.node.test.ts
 * (add BISIM_PATH=<path> to replay only the shrunk counterexample).
 */
import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  type CapPick,
  hex,
  md5Hex,
  type Observation,
  type QueryFault,
  VaultModel,
  type VaultRequest,
} from "../model/vault-model.ts";
import {
  type CapArg,
  type Command,
  commandSequence,
  type JsonBody,
  type PathArg,
  type ResolvedPath,
  type Sequence,
  type VersionIdArg,
  type WriteCondition,
} from "./bisim-commands.ts";
import { type HttpImpl, normaliseJson, perform } from "./bisim-http.ts";
import { mintRoot, startTestVault, type TestVault } from "./test-vault.ts";

const NUM_RUNS = Number(process.env.BISIM_RUNS || 100);
const STREAMS = Math.max(1, Number(process.env.BISIM_STREAMS || 2));
const MAX_PAGES = 40;
const SEED = process.env.BISIM_SEED ? Number(process.env.BISIM_SEED) : (Date.now() ^ (Math.random() * 0x7fffffff)) | 0;
const REPLAY_PATH = process.env.BISIM_PATH || undefined;

let vault: TestVault;
let sequence = 0;

beforeAll(async () => {
  vault = await startTestVault();
});
afterAll(async () => {
  await vault?.stop();
});

// ---- running a sequence --------------------------------------------------------

function pickCap(arg: CapArg, model: VaultModel): CapPick {
  if (arg === "latest") return { role: model.capCount - 1 };
  return typeof arg === "number" ? { role: arg % model.capCount } : { bogus: arg };
}

const STALE_ETAG = md5Hex(new TextEncoder().encode("an old version"));

/** Paths that named a file or folder when last used in the sequence (the model decides), for `reuse`. */
type History = string[];

/** After a request the model accepted, remembers the paths that now exist (only those a query can carry). */
function remember(history: History, request: VaultRequest, status: number): void {
  if (status >= 300) return;
  const paths: unknown[] = [];
  if (request.op === "write") paths.push(request.path);
  if (request.op === "move" || request.op === "subdir") {
    // A successful request's body parsed; an empty one counts as `{}`.
    const body = JSON.parse(request.body || "{}") as Record<string, unknown>;
    paths.push(request.op === "move" ? body.to : body.path);
  }
  for (const path of paths) if (typeof path === "string" && path !== "" && path.isWellFormed()) history.push(path);
}

function resolvePath(arg: PathArg, history: History): ResolvedPath {
  if (!("reuse" in arg)) return arg;
  return { text: history.length === 0 ? "a" : history[history.length - 1 - (arg.reuse % history.length)]! };
}

function resolveBody(body: JsonBody, history: History): string {
  if (typeof body === "string") return body;
  const resolved = Object.fromEntries(
    Object.entries(body).map(([key, value]) => [
      key,
      value !== null && typeof value === "object" && "reuse" in value
        ? resolvePath(value as PathArg, history).text
        : value,
    ]),
  );
  return JSON.stringify(resolved);
}

/** Turns a generated command into a request, resolving paths, etags and roles against the sequence so far. */
function toRequest(
  generated: Command,
  model: VaultModel,
  history: History,
): { request: VaultRequest; raw?: string } | null {
  const cmd = "path" in generated ? { ...generated, path: resolvePath(generated.path, history) } : generated;
  const resolved = withFault(toPlainRequest(cmd, model, history), "path" in cmd ? cmd.path.fault : undefined);
  return resolved;
}

function withFault(resolved: { request: VaultRequest; raw?: string } | null, fault: QueryFault | undefined) {
  if (resolved && fault && "path" in resolved.request)
    (resolved.request as { queryFault?: QueryFault }).queryFault = fault;
  return resolved;
}

type ResolvedCommand =
  | Exclude<Command, { path: PathArg }>
  | (Extract<Command, { path: PathArg }> & { path: ResolvedPath });

function toPlainRequest(
  cmd: ResolvedCommand,
  model: VaultModel,
  history: History,
): { request: VaultRequest; raw?: string } | null {
  switch (cmd.kind) {
    case "write": {
      const cap = pickCap(cmd.cap, model);
      const current = ("role" in cap ? model.etagAt(cap.role, cmd.path.text) : null) ?? md5Hex(new Uint8Array([1]));
      const conditions: Record<WriteCondition, { ifMatch?: string; ifNoneMatch?: string }> = {
        none: {},
        ifMatch: { ifMatch: `"${current}"` },
        ifMatchBare: { ifMatch: current },
        ifMatchWeak: { ifMatch: `W/"${current}"` },
        ifMatchList: { ifMatch: `"${STALE_ETAG}", "${current}"` },
        ifMatchStale: { ifMatch: `"${STALE_ETAG}"` },
        ifMatchStar: { ifMatch: "*" },
        ifNoneMatchStar: { ifNoneMatch: "*" },
        ifNoneMatch: { ifNoneMatch: `"${current}"` },
        ifNoneMatchStale: { ifNoneMatch: `"${STALE_ETAG}"` },
      };
      const request: VaultRequest = {
        op: "write",
        cap,
        path: cmd.path.text,
        content: cmd.content,
        ...conditions[cmd.condition],
      };
      if (cmd.contentType !== undefined) request.contentType = cmd.contentType;
      return { request, ...raw(cmd.path) };
    }
    case "read": {
      const cap = pickCap(cmd.cap, model);
      const current = ("role" in cap ? model.etagAt(cap.role, cmd.path.text) : null) ?? STALE_ETAG;
      const ifNoneMatch = {
        none: undefined,
        current: `"${current}"`,
        weak: `W/"${current}"`,
        stale: `"${STALE_ETAG}"`,
        star: "*",
        list: `"${STALE_ETAG}", W/"${current}"`,
      }[cmd.condition];
      const request: VaultRequest = { op: "read", cap, path: cmd.path.text };
      if (cmd.range !== undefined) request.range = cmd.range;
      if (ifNoneMatch !== undefined) request.ifNoneMatch = ifNoneMatch;
      return { request, ...raw(cmd.path) };
    }
    case "stat":
    case "delete":
    case "mkdir":
    case "rmdir":
      return { request: { op: cmd.kind, cap: pickCap(cmd.cap, model), path: cmd.path.text }, ...raw(cmd.path) };
    case "list": {
      const request: VaultRequest = { op: "list", cap: pickCap(cmd.cap, model), path: cmd.path.text };
      if (cmd.limit !== undefined) request.limit = cmd.limit;
      if (cmd.cursor !== undefined) request.cursor = cmd.cursor;
      if (cmd.depth !== undefined) request.depth = cmd.depth;
      return { request, ...raw(cmd.path) };
    }
    case "move":
    case "subdir":
      return { request: { op: cmd.kind, cap: pickCap(cmd.cap, model), body: resolveBody(cmd.body, history) } };
    case "revoke":
      // Any non-root cap, live or already dead.
      return model.capCount < 2
        ? null
        : { request: { op: "revoke", cap: { role: 1 + (cmd.target % (model.capCount - 1)) } } };
    case "revokeChild": {
      const child: CapPick = cmd.child === "bogus" ? { bogus: "unknown" } : { role: cmd.child % model.capCount };
      return { request: { op: "revokeChild", cap: pickCap(cmd.cap, model), child } };
    }
    case "children":
    case "info":
      return { request: { op: cmd.kind, cap: pickCap(cmd.cap, model) } };
    case "resume":
      return null; // run by runSequence, from the saved listing
    case "versions": {
      const request: VaultRequest = { op: "versions", cap: pickCap(cmd.cap, model), path: cmd.path.text };
      if (cmd.limit !== undefined) request.limit = cmd.limit;
      if (cmd.cursor !== undefined) request.cursor = versionIdFor(cmd.cursor, model, request.cap);
      return { request, ...raw(cmd.path) };
    }
    case "readVersion":
    case "restore":
    case "redact": {
      const cap = pickCap(cmd.cap, model);
      return { request: { op: cmd.kind, cap, id: versionIdFor(cmd.id, model, cap) } };
    }
  }
}

function versionIdFor(arg: VersionIdArg, model: VaultModel, cap: CapPick): string {
  const newest = model.newestVersionId;
  if ("raw" in arg) return arg.raw;
  if ("unknown" in arg) return String(newest + 1 + arg.unknown);
  if ("mine" in arg) {
    // None it can name: the newest of the root, which it may or may not reach.
    const mine = "role" in cap ? model.versionIdsOf(cap.role) : [];
    return String(mine.length > 0 ? mine[arg.mine % mine.length] : Math.max(1, newest));
  }
  if (newest === 0) return "1";
  return String("recent" in arg ? Math.max(1, newest - arg.recent) : 1 + (arg.any % newest));
}

function raw(path: ResolvedPath): { raw?: string } {
  return path.raw === undefined ? {} : { raw: path.raw };
}

type Trace = { model: Observation[]; r2: Observation[]; disk: Observation[] };

/** Runs one request everywhere; a list follows each implementation's own cursors to the end. */
type Cursors = Record<keyof Trace, string | null>;

/**
 * Runs one request everywhere; a list follows each implementation's own
 * cursors to the end. `resume` starts a list at each one's saved cursor.
 */
async function step(
  model: VaultModel,
  impls: HttpImpl[],
  request: VaultRequest,
  rawPath: string | undefined,
  resume?: Cursors,
): Promise<Trace & { minted?: number; firstCursors: Cursors }> {
  const startAt = (name: keyof Trace): VaultRequest =>
    resume && request.op === "list" ? { ...request, cursor: resume[name] ?? "" } : request;
  const first = model.apply(startAt("model"));
  const trace: Trace = { model: [first.observation], r2: [], disk: [] };
  const firstCursors: Cursors = { model: first.cursor ?? null, r2: null, disk: null };
  let modelCursor = first.cursor ?? null;
  const paged = request.op === "list" || request.op === "versions";
  while (paged && modelCursor !== null && trace.model.length < MAX_PAGES) {
    const next = model.apply({ ...request, cursor: modelCursor });
    trace.model.push(next.observation);
    modelCursor = next.cursor ?? null;
  }
  await Promise.all(
    impls.map(async (impl) => {
      let page = await perform(impl, startAt(impl.name), rawPath);
      firstCursors[impl.name] = page.cursor;
      if (request.op === "subdir" && first.minted !== undefined && page.observation.status === 201) {
        // Register the new cap under the role the model gave it, then normalise again.
        const body = page.observation.body as { token: string; id: string };
        impl.tokens[first.minted] = body.token;
        impl.ids[first.minted] = body.id;
        page = { ...page, observation: { ...page.observation, body: normaliseJson(impl, body) } };
      }
      trace[impl.name].push(page.observation);
      while (paged && page.cursor !== null && trace[impl.name].length < MAX_PAGES) {
        page = await perform(impl, { ...request, cursor: page.cursor }, rawPath);
        trace[impl.name].push(page.observation);
      }
    }),
  );
  return first.minted === undefined ? { ...trace, firstCursors } : { ...trace, firstCursors, minted: first.minted };
}

/** The model's observation as a matcher: a message it leaves unspecified matches any string. */
function asExpected(observation: Observation): unknown {
  const body = observation.body as { error?: { code: string; message: string | null } } | null;
  if (body?.error && body.error.message === null) {
    return { ...observation, body: { error: { code: body.error.code, message: expect.any(String) } } };
  }
  return observation;
}

const mintBisimRoot = (backend: "r2" | "disk", prefix: string, keepVersions: number | undefined) =>
  mintRoot(vault, { backend, prefix, label: "bisim", keepVersions });

let commandsRun = 0;
/** `op status` (and whether a child cap was used) → how often the model answered so; printed with BISIM_STATS=1. */
const outcomes = new Map<string, number>();

async function runSequence(commands: Command[], keepVersions?: number): Promise<void> {
  // Fixed-width, so the prefix (which counts towards the key limit) has the same length in every run and replay.
  const n = String(++sequence).padStart(6, "0");
  const [r2Root, diskRoot] = await Promise.all([
    mintBisimRoot("r2", `bisim/${n}/`, keepVersions),
    mintBisimRoot("disk", `bisim/${n}`, keepVersions),
  ]);
  const model = new VaultModel(`bisim/${n}/`, "bisim", keepVersions);
  const impls: HttpImpl[] = [
    { name: "r2", vaultUrl: vault.url, tokens: [r2Root.token], ids: [r2Root.id] },
    { name: "disk", vaultUrl: vault.url, tokens: [diskRoot.token], ids: [diskRoot.id] },
  ];
  const log: string[] = [];
  const history: History = [];
  let saved: { request: VaultRequest; raw?: string; cursors: Cursors } | null = null;
  const check = async (where: string, request: VaultRequest, raw?: string, resume?: Cursors): Promise<Observation> => {
    const trace = await step(model, impls, request, raw, resume);
    if (request.op === "list" && !resume && Object.values(trace.firstCursors).every((c) => c !== null)) {
      saved = { request, cursors: trace.firstCursors, ...(raw === undefined ? {} : { raw }) };
    }
    log.push(`${where}\n    model: ${show(trace.model)}`);
    const context = () =>
      `${where}\n  model: ${show(trace.model)}\n  r2:    ${show(trace.r2)}\n  disk:  ${show(trace.disk)}\nearlier in this sequence:\n  ${log.slice(0, -1).join("\n  ")}`;
    expect(trace.disk, `R2 and disk differ at ${context()}`).toEqual(trace.r2);
    expect(trace.r2, `R2 and disk agree but differ from the model at ${context()}`).toEqual(
      trace.model.map(asExpected),
    );
    return trace.model[0]!;
  };
  for (const [index, cmd] of commands.entries()) {
    if (cmd.kind === "resume") {
      if (!saved) continue;
      const { request, raw, cursors } = saved;
      commandsRun++;
      const observed = await check(
        `command ${index} resume ${describeRequest(request)} from its first cursor`,
        request,
        raw,
        cursors,
      );
      outcomes.set(`resume ${observed.status}`, (outcomes.get(`resume ${observed.status}`) ?? 0) + 1);
      continue;
    }
    const resolved = toRequest(cmd, model, history);
    if (!resolved) continue;
    commandsRun++;
    const where = `command ${index} ${describeRequest(resolved.request)}${resolved.raw ? ` (raw query path ${resolved.raw})` : ""}`;
    const observed = await check(where, resolved.request, resolved.raw);
    remember(history, resolved.request, observed.status);
    const byChild = "role" in resolved.request.cap && resolved.request.cap.role > 0 ? " (child)" : "";
    const outcome = `${resolved.request.op} ${observed.status}${byChild}`;
    outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
  }
  // Finally the whole tree, through the root cap: every folder listed, every file read, so no
  // difference in state stays hidden because no command happened to look at it.
  const folders = [""];
  while (folders.length > 0) {
    const folder = folders.shift()!;
    const listing = await check(`final sweep: list ${JSON.stringify(folder)}`, {
      op: "list",
      cap: { role: 0 },
      path: folder,
    });
    for (const entry of (listing.body as { entries: { name: string; type: string }[] }).entries) {
      const path = folder === "" ? entry.name : `${folder}/${entry.name}`;
      if (entry.type === "dir") folders.push(path);
      else await check(`final sweep: read ${JSON.stringify(path)}`, { op: "read", cap: { role: 0 }, path });
    }
  }
  // And the whole history: every path that ever had a version, and every id allocated (pruned and redacted ones
  // included, so bytes a prune or a redaction took from a version that still shares them would show). Reads only,
  // so they run at once.
  const ids = Array.from({ length: model.newestVersionId }, (_, i) => String(i + 1));
  await Promise.all([
    ...model.versionedPaths.map((path) =>
      check(`final sweep: versions ${JSON.stringify(path)}`, { op: "versions", cap: { role: 0 }, path }),
    ),
    ...ids.map((id) => check(`final sweep: version ${id}`, { op: "readVersion", cap: { role: 0 }, id })),
  ]);
}

function describeRequest(request: VaultRequest): string {
  return JSON.stringify(request, (_key, value: unknown) => (value instanceof Uint8Array ? `hex:${hex(value)}` : value));
}

function show(observations: Observation[]): string {
  const text = JSON.stringify(observations.length === 1 ? observations[0] : observations);
  return text.length > 3000 ? `${text.slice(0, 3000)}…` : text;
}

// ---- sequences that once told the implementations apart ---------------------------

const text = (t: string) => new TextEncoder().encode(t);
const pathArg = (t: string): PathArg => ({ text: t });
const write = (cap: CapArg, path: string, condition: WriteCondition = "none"): Command => ({
  kind: "write",
  cap,
  path: pathArg(path),
  content: text(path),
  condition,
});
const subdir = (cap: CapArg, path: string): Command => ({ kind: "subdir", cap, body: { path } });

const folder = (kind: "mkdir" | "rmdir", cap: CapArg, path: string): Command => ({ kind, cap, path: pathArg(path) });

/** Each ran differently on R2 and disk (or against the model) before its fix; kept so it never does again. */
const KNOWN: [string, Command[]][] = [
  [
    "folders: made and listed while empty, kept by the last delete and move out, removed only while empty",
    [
      folder("mkdir", 0, "e/f"),
      { kind: "list", cap: 0, path: pathArg("e") },
      { kind: "list", cap: 0, path: pathArg("e/f") },
      { kind: "list", cap: 0, path: pathArg(""), depth: "0" },
      write(0, "e/f"),
      write(0, "e/f/g"),
      folder("rmdir", 0, "e/f"),
      { kind: "delete", cap: 0, path: pathArg("e/f/g") },
      { kind: "stat", cap: 0, path: pathArg("e/f") },
      folder("rmdir", 0, "e"),
      folder("rmdir", 0, "e/f"),
      { kind: "list", cap: 0, path: pathArg("e") },
      write(0, "m/n"),
      { kind: "move", cap: 0, body: { from: "m/n", to: "n" } },
      { kind: "list", cap: 0, path: pathArg("m") },
      folder("mkdir", 0, "n/x"),
      folder("mkdir", 0, "n"),
      folder("rmdir", 0, "n"),
      folder("rmdir", 0, ""),
      folder("mkdir", 0, ""),
      subdir(0, "k"),
      write(1, "z"),
      { kind: "delete", cap: 1, path: pathArg("z") },
      { kind: "list", cap: 0, path: pathArg("k") },
      { kind: "list", cap: 1, path: pathArg(""), depth: "2" },
      folder("rmdir", 0, "k"),
      { kind: "stat", cap: 0, path: pathArg("k") },
    ],
  ],
  [
    "quotas: a child's limits bind its writes, superseded and deleted bytes keep counting, looser limits are refused",
    [
      { kind: "subdir", cap: 0, body: { path: "q", maxBytes: 6, maxFiles: 2 } },
      { kind: "subdir", cap: 1, body: { path: "", maxBytes: 7 } },
      write(1, "aa"),
      write(1, "aa"),
      write(1, "bbb"),
      { kind: "info", cap: 1 },
      { kind: "delete", cap: 1, path: pathArg("aa") },
      write(1, "c"),
      write(0, "q/dd"),
      write(1, "bbb"),
      { kind: "move", cap: 1, body: { from: "bbb", to: "e" } },
      { kind: "subdir", cap: 1, body: { path: "", maxFiles: 1 } },
      write(3, "f"),
      { kind: "info", cap: 3 },
      { kind: "info", cap: 0 },
    ],
  ],
  [
    "a file below a cap's root whose name is a path only there (`c:`, `~x`) is listed, and a page may end on it",
    [
      write(0, "a b/c:"),
      write(0, "a b/~x"),
      write(0, "a b/~y"),
      { kind: "list", cap: 0, path: pathArg(""), limit: "1" },
      { kind: "list", cap: 0, path: pathArg("a b"), limit: "1" },
      subdir(0, "a b"),
      { kind: "list", cap: 1, path: pathArg("") },
    ],
  ],
  [
    "a weak If-Match names the same etag on R2 as on disk",
    [write(0, "a"), write(0, "a", "ifMatchWeak"), write(0, "a", "ifMatchList"), write(0, "a", "ifMatchBare")],
  ],
  [
    "a child cap whose root became a file cannot write beneath it",
    [subdir(0, "a"), write(0, "a"), write(1, "b"), { kind: "list", cap: 1, path: pathArg("") }, subdir(1, "")],
  ],
  [
    "a folder a child cap left empty (its root) does not block a file of that name",
    [
      write(0, "a/f"),
      subdir(0, "a"),
      { kind: "delete", cap: 1, path: pathArg("f") },
      write(0, "a"),
      { kind: "list", cap: 1, path: pathArg("") },
      write(1, "g"),
    ],
  ],
  [
    "a child root made by a refused write does not block a file or a move of that name",
    [
      subdir(0, "b"),
      write(1, "x", "ifMatchStale"),
      write(0, "b"),
      subdir(0, "c"),
      write(2, "x", "ifMatchStale"),
      write(0, "d"),
      { kind: "move", cap: 0, body: { from: "d", to: "c" } },
      { kind: "stat", cap: 0, path: pathArg("c") },
    ],
  ],
  [
    "a content type with a tab, or longer than 256 characters, comes back as stored",
    [
      { kind: "write", cap: 0, path: pathArg("t"), content: text("t"), contentType: "a\tb", condition: "none" },
      {
        kind: "write",
        cap: 0,
        path: pathArg("long"),
        content: text("l"),
        contentType: `text/plain; x=${"y".repeat(300)}`,
        condition: "none",
      },
      { kind: "stat", cap: 0, path: pathArg("t") },
      { kind: "read", cap: 0, path: pathArg("long"), condition: "none" },
    ],
  ],
  [
    "a listing resumed after its folder changed continues by name, and is empty once the folder is a file",
    [
      write(0, "d/1"),
      write(0, "d/2"),
      write(0, "d/3"),
      { kind: "list", cap: 0, path: pathArg("d"), limit: "1" },
      { kind: "delete", cap: 0, path: pathArg("d/2") },
      write(0, "d/0"),
      { kind: "resume" },
      { kind: "delete", cap: 0, path: pathArg("d/1") },
      { kind: "delete", cap: 0, path: pathArg("d/3") },
      { kind: "delete", cap: 0, path: pathArg("d/0") },
      { kind: "resume" },
      write(0, "d"),
      { kind: "resume" },
    ],
  ],
  [
    "a file's versions end with cursor null on a page that is exactly full",
    [
      write(0, "f"),
      write(0, "f"),
      { kind: "versions", cap: 0, path: pathArg("f"), limit: "1" },
      { kind: "versions", cap: 0, path: pathArg("f"), limit: "2" },
    ],
  ],
];

it.each(KNOWN)("%s", async (_name, commands) => {
  await runSequence(commands);
});

// ---- the property -----------------------------------------------------------------

/** One seeded stream of `numRuns` sequences; its failure message says how to replay it alone. */
async function checkStream(seed: number, numRuns: number): Promise<fc.RunDetails<[Sequence]>> {
  const started = Date.now();
  const details = await fc.check(
    fc.asyncProperty(commandSequence, async ({ commands, keepVersions }) => {
      await runSequence(commands, keepVersions);
    }),
    { seed, numRuns, ...(REPLAY_PATH ? { path: REPLAY_PATH } : {}), interruptAfterTimeLimit: 600_000 },
  );
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (details.failed) {
    const replay = `BISIM_SEED=${details.seed} BISIM_STREAMS=1 BISIM_RUNS=${numRuns}`;
    const repro = `${replay} BISIM_PATH=${details.counterexamplePath ?? ""} npx vitest run --config vitest.node.config.ts test/node/bisimulation.node.test.ts`;
    const counterexample = details.counterexample
      ? JSON.stringify(details.counterexample[0], (_, v: unknown) => (v instanceof Uint8Array ? `hex:${hex(v)}` : v), 1)
      : "(none)";
    const cause =
      details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
    throw new Error(
      `bisimulation failed after ${details.numRuns} sequences (${seconds}s), seed ${details.seed}, path ${details.counterexamplePath}\n` +
        `reproduce: ${repro}\n(without BISIM_PATH it re-runs all ${numRuns} sequences of this stream; with it only the shrunk one)\n` +
        `shrunk counterexample:\n${counterexample}\n\n${cause}`,
    );
  }
  return details;
}

it(`model, R2 and disk answer every random sequence alike (${NUM_RUNS} sequences)`, async () => {
  const started = Date.now();
  // Stream i gets seed SEED + i and an equal share of the runs.
  const streams = Array.from({ length: STREAMS }, (_, i) => ({
    seed: (SEED + i) | 0,
    runs: Math.floor(NUM_RUNS / STREAMS) + (i < NUM_RUNS % STREAMS ? 1 : 0),
  }));
  const results = await Promise.allSettled(streams.map(({ seed, runs }) => checkStream(seed, runs)));
  const failed = results.find((r) => r.status === "rejected");
  if (failed) throw failed.reason;
  const all = results.map((r) => (r as PromiseFulfilledResult<fc.RunDetails<[Sequence]>>).value);
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const ran = all.reduce((n, details) => n + details.numRuns, 0);
  console.log(
    `bisimulation: seeds ${streams.map((s) => s.seed).join(", ")}, ${ran} sequences, ${commandsRun} commands, ${seconds}s`,
  );
  if (process.env.BISIM_STATS)
    console.log(
      [...outcomes]
        .sort()
        .map(([k, v]) => `${k}: ${v}`)
        .join("\n"),
    );
  for (const details of all) expect(details.interrupted).toBe(false);
  if (!REPLAY_PATH) expect(ran).toBe(NUM_RUNS);
}, 900_000);
