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
 * Commands: bisim-commands.ts; requests from them: bisim-requests.ts; the
 * sequences that once failed: bisim-known.ts.
 */
import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import { hex, type Observation, VaultModel, type VaultRequest } from "../model/vault-model.ts";
import { type Command, commandSequence, type Sequence } from "./bisim-commands.ts";
import { type HttpImpl, normaliseJson, perform } from "./bisim-http.ts";
import { KNOWN } from "./bisim-known.ts";
import { type History, remember, toRequest } from "./bisim-requests.ts";
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

// ---- sequences that once told the implementations apart (bisim-known.ts) ----------

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
