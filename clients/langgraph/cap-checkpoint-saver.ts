import type { RunnableConfig } from "@langchain/core/runnables";
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  compareWritesSortKeys,
  copyCheckpoint,
  getCheckpointId,
  maxChannelVersion,
  type PendingWrite,
  type SerializerProtocol,
  TASKS,
  WRITES_IDX_MAP,
  writesSortKey,
} from "@langchain/langgraph-checkpoint";
import type { ListEntry } from "../../shared/wire-types.ts";
import { isCapError } from "../typescript/cap-error.ts";
import { FsCap } from "../typescript/fs-cap.ts";
import type { CapOptions } from "../typescript/types.ts";
import { CheckpointFileError, decodeSegment, encodeSegment, keyArg, type Stored, stored, unstored } from "./files.ts";

/** What a checkpoint's file holds (format 1). */
interface CheckpointFile {
  format: 1;
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string;
  parent_checkpoint_id: string | null;
  checkpoint: Stored;
  metadata: Stored;
}

/** One channel's value at one version (format 1); `value` null: the channel had none at that version. */
interface ChannelFile {
  format: 1;
  channel: string;
  version: string | number;
  value: Stored | null;
}

/** One pending write, as a checkpoint's writes file lists it. */
interface WriteRecord {
  task_id: string;
  idx: number;
  channel: string;
  task_path: string;
  value: Stored;
}

/** What a checkpoint's writes file holds (format 1). */
interface WritesFile {
  format: 1;
  writes: WriteRecord[];
}

export interface CapCheckpointSaverOptions extends CapOptions {
  /** The folder of the cap that holds the threads (default: the cap's root). */
  folder?: string;
  /** LangGraph's serializer (default: its JsonPlusSerializer). */
  serde?: SerializerProtocol;
  /** Attempts of a writes file's read-modify-write that lost a race before it gives up (default 8). */
  attempts?: number;
  /**
   * The cap (or `folder`) is this one thread's folder, as a child cap minted
   * on `<folder>/<thread>` is: the saver then holds that thread alone, and a
   * call about any other thread is refused before any request.
   */
  thread?: string;
  /**
   * Most checkpoints one `list` call looks at (default 10,000): a walk over
   * every thread reads a file per checkpoint, so past this it throws
   * (`code: "scan_limit"`) rather than run on; narrow it by thread.
   */
  scanLimit?: number;
}

/**
 * A LangGraph checkpointer over a cap: every checkpoint is a JSON file a
 * person can read in the vault's console, and one thread is one folder, so a
 * child cap on that folder shares (or, read-only, shows) exactly one thread.
 *
 *   <folder>/<thread>/ns-<checkpoint_ns>/<checkpoint_id>.json          the checkpoint, its metadata, its parent
 *   <folder>/<thread>/ns-<checkpoint_ns>/<checkpoint_id>.writes.json   its pending writes
 *
 * Names are percent-encoded (files.ts), so any thread id or namespace is one
 * plain segment. A writes file is read, changed and written back only if its
 * sha256 is still the one read (`ifMatch`), retried when another process won
 * the race: two processes writing one thread lose nothing. What the cap
 * refuses (`forbidden` on a read-only cap, `no_such_cap` once revoked) is
 * thrown as the SDK's CapError, its code the vault's.
 */
export class CapCheckpointSaver extends BaseCheckpointSaver {
  readonly #cap: FsCap;
  readonly #folder: string;
  readonly #attempts: number;
  readonly #thread: string | undefined;
  readonly #scanLimit: number;

  constructor(cap: string | FsCap, options: CapCheckpointSaverOptions = {}) {
    super(options.serde);
    this.#cap = typeof cap === "string" ? new FsCap(cap, options) : cap;
    this.#folder = (options.folder ?? "").replace(/\/+$/, "");
    this.#attempts = options.attempts ?? 8;
    if (options.thread !== undefined) keyArg("thread", options.thread);
    this.#thread = options.thread;
    this.#scanLimit = options.scanLimit ?? 10_000;
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const threadId = config.configurable?.thread_id;
    const ns = config.configurable?.checkpoint_ns ?? "";
    const wanted = getCheckpointId(config);
    if (threadId === undefined) return undefined;
    keyArg("thread_id", threadId);
    keyArg("checkpoint_ns", ns, true);
    if (wanted) keyArg("checkpoint_id", wanted);
    const id = wanted || (await this.#checkpointIds(threadId, ns))[0];
    if (id === undefined) return undefined;
    const file = await this.#readCheckpoint(threadId, ns, id);
    if (file === null) return undefined;
    const tuple = await this.#tuple(file);
    // Asked by id, the answer carries the config it was asked with, as MemorySaver's does.
    return wanted ? { ...tuple, config } : tuple;
  }

  async *list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple> {
    let { limit } = options ?? {};
    const { before, filter } = options ?? {};
    const threadId = config.configurable?.thread_id;
    const ns = config.configurable?.checkpoint_ns;
    const onlyId = config.configurable?.checkpoint_id;
    if (threadId !== undefined) keyArg("thread_id", threadId);
    if (ns !== undefined) keyArg("checkpoint_ns", ns, true);
    if (onlyId) keyArg("checkpoint_id", onlyId);
    const beforeId = before?.configurable?.checkpoint_id;
    if (beforeId) keyArg("checkpoint_id", beforeId);
    const threads = threadId ? [threadId] : await this.#threads();
    let scanned = 0;
    for (const thread of threads) {
      const namespaces = ns !== undefined ? [ns] : await this.#namespaces(thread);
      for (const namespace of namespaces) {
        for (const id of await this.#checkpointIds(thread, namespace)) {
          if (onlyId && id !== onlyId) continue;
          if (beforeId && id >= beforeId) continue;
          // A limit already met ends the walk before another checkpoint is looked at.
          if (limit !== undefined && limit <= 0) return;
          if (++scanned > this.#scanLimit)
            throw Object.assign(
              new RangeError(`list looked at ${this.#scanLimit} checkpoints (scanLimit) and stopped: name a thread`),
              { code: "scan_limit" },
            );
          const file = await this.#readCheckpoint(thread, namespace, id);
          if (file === null) continue;
          const metadata = (await this.#load(file.metadata, file, "metadata")) as Record<string, unknown>;
          if (filter && !Object.entries(filter).every(([key, value]) => metadata[key] === value)) continue;
          if (limit !== undefined) {
            if (limit <= 0) return;
            limit -= 1;
          }
          yield await this.#tuple(file, metadata);
        }
      }
    }
  }

  async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const threadId = config.configurable?.thread_id;
    const ns = config.configurable?.checkpoint_ns ?? "";
    if (threadId === undefined)
      throw new Error('Failed to put checkpoint: the config\'s "configurable" has no "thread_id" field.');
    keyArg("thread_id", threadId);
    keyArg("checkpoint_ns", ns, true);
    keyArg("checkpoint_id", checkpoint.id);
    const parent = config.configurable?.checkpoint_id;
    // Channel values live apart from the checkpoint, one file per channel version, and only the versions
    // this step changed (newVersions) are written: a channel that did not change is not stored again,
    // and a checkpoint reads each channel at the version it names.
    const { channel_values: values, ...rest } = copyCheckpoint(checkpoint);
    await Promise.all(
      Object.entries(newVersions).map(async ([channel, version]) => {
        const blob: ChannelFile = { format: 1, channel, version, value: null };
        if (Object.hasOwn(values, channel)) blob.value = stored(await this.serde.dumpsTyped(values[channel]));
        await this.#cap.write(this.#blobPath(threadId, ns, channel, version), json(blob), {
          contentType: "application/json",
        });
      }),
    );
    const [serialized, meta] = await Promise.all([
      this.serde.dumpsTyped({ ...rest, channel_values: {} }),
      this.serde.dumpsTyped(metadata),
    ]);
    const file: CheckpointFile = {
      format: 1,
      thread_id: threadId,
      checkpoint_ns: ns,
      checkpoint_id: checkpoint.id,
      parent_checkpoint_id: typeof parent === "string" && parent !== "" ? parent : null,
      checkpoint: stored(serialized),
      metadata: stored(meta),
    };
    // One write: the vault stores a file whole or not at all, so a reader never sees half a checkpoint.
    await this.#cap.write(this.#path(threadId, ns, `${encodeSegment(checkpoint.id)}.json`), json(file), {
      contentType: "application/json",
    });
    return { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: checkpoint.id } };
  }

  async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath?: string): Promise<void> {
    const threadId = config.configurable?.thread_id;
    const ns = config.configurable?.checkpoint_ns ?? "";
    const id = config.configurable?.checkpoint_id;
    if (threadId === undefined)
      throw new Error('Failed to put writes: the config\'s "configurable" has no "thread_id" field.');
    if (id === undefined)
      throw new Error('Failed to put writes: the config\'s "configurable" has no "checkpoint_id" field.');
    keyArg("thread_id", threadId);
    keyArg("checkpoint_ns", ns, true);
    keyArg("checkpoint_id", id);
    keyArg("task_id", taskId);
    const records: WriteRecord[] = await Promise.all(
      writes.map(async ([channel, value], idx) => ({
        task_id: taskId,
        idx: WRITES_IDX_MAP[channel] ?? idx,
        channel,
        task_path: taskPath ?? "",
        value: stored(await this.serde.dumpsTyped(value)),
      })),
    );
    const path = this.#path(threadId, ns, `${encodeSegment(id)}.writes.json`);
    await this.#update(path, (current) => {
      const had = new Set(current.map((w) => `${w.task_id},${w.idx}`));
      const next = [...current];
      for (const record of records) {
        const key = `${record.task_id},${record.idx}`;
        // As MemorySaver: a regular write (idx ≥ 0) is kept once; a special one (error, interrupt…) replaces.
        if (record.idx >= 0 && had.has(key)) continue;
        const at = next.findIndex((w) => `${w.task_id},${w.idx}` === key);
        if (at >= 0) next[at] = record;
        else next.push(record);
      }
      return next;
    });
  }

  async deleteThread(threadId: string): Promise<void> {
    keyArg("thread_id", threadId);
    const thread = this.#threadPath(threadId);
    // File by file (the vault's folder delete is bounded to small trees), then the folders, deepest first.
    const folders = new Set<string>();
    for await (const entry of this.#entries(thread, 0)) {
      if (entry.type !== "file") continue;
      await this.#cap.delete(join(thread, entry.name)).catch(ignoreMissing);
      const slash = entry.name.lastIndexOf("/");
      if (slash > 0) folders.add(entry.name.slice(0, slash));
    }
    for (const folder of [...folders].sort((a, b) => b.length - a.length))
      await this.#cap.removeFolder(join(thread, folder)).catch(ignoreMissing);
    // A one-thread saver's folder may be its cap's root, which stays.
    if (thread !== "") await this.#cap.removeFolder(thread).catch(ignoreMissing);
  }

  // ---- reading ----

  async #tuple(file: CheckpointFile, metadata?: unknown): Promise<CheckpointTuple> {
    const checkpoint = (await this.#load(file.checkpoint, file, "checkpoint")) as Checkpoint;
    checkpoint.channel_values = await this.#channelValues(file, checkpoint.channel_versions);
    const parent = file.parent_checkpoint_id;
    const configurable = { thread_id: file.thread_id, checkpoint_ns: file.checkpoint_ns };
    if (checkpoint.v < 4 && parent !== null)
      await this.#migratePendingSends(checkpoint, file.thread_id, file.checkpoint_ns, parent);
    const tuple: CheckpointTuple = {
      config: { configurable: { ...configurable, checkpoint_id: file.checkpoint_id } },
      checkpoint,
      metadata: (metadata ?? (await this.#load(file.metadata, file, "metadata"))) as CheckpointMetadata,
      pendingWrites: await this.#pendingWrites(file.thread_id, file.checkpoint_ns, file.checkpoint_id),
    };
    if (parent !== null) tuple.parentConfig = { configurable: { ...configurable, checkpoint_id: parent } };
    return tuple;
  }

  /** Checkpoints before format 4 kept pending sends on their parent's writes: moved into the checkpoint, as MemorySaver does. */
  async #migratePendingSends(checkpoint: Checkpoint, thread: string, ns: string, parent: string): Promise<void> {
    const sends = (await this.#writes(thread, ns, parent)).filter((w) => w.channel === TASKS);
    const mutable = checkpoint as { channel_values: Record<string, unknown>; channel_versions: ChannelVersions };
    mutable.channel_values ??= {};
    mutable.channel_values[TASKS] = await Promise.all(sends.map((w) => this.#loadValue(w.value)));
    mutable.channel_versions ??= {};
    const versions = Object.values(mutable.channel_versions);
    mutable.channel_versions[TASKS] =
      versions.length > 0 ? maxChannelVersion(...versions) : this.getNextVersion(undefined);
  }

  /** Each channel at the version the checkpoint names; a version stored without a value (or never stored) is absent. */
  async #channelValues(file: CheckpointFile, versions: ChannelVersions): Promise<Record<string, unknown>> {
    const values: Record<string, unknown> = {};
    await Promise.all(
      Object.entries(versions ?? {}).map(async ([channel, version]) => {
        const path = this.#blobPath(file.thread_id, file.checkpoint_ns, channel, version);
        const text = await this.#cap.readText(path).catch(nullIfMissing);
        if (text === null) return;
        const blob = parseChannel(text, path);
        if (blob.value !== null) values[channel] = await this.#loadValue(blob.value);
      }),
    );
    // In the channels' own order, as the checkpoint lists their versions.
    return Object.fromEntries(
      Object.keys(versions ?? {})
        .filter((c) => c in values)
        .map((c) => [c, values[c]]),
    );
  }

  async #pendingWrites(thread: string, ns: string, id: string): Promise<CheckpointPendingWrite[]> {
    const ordered = (await this.#writes(thread, ns, id))
      .map((w) => ({ key: writesSortKey(w.task_path, w.task_id, w.idx), w }))
      .sort((a, b) => compareWritesSortKeys(a.key, b.key));
    return Promise.all(
      ordered.map(async ({ w }) => [w.task_id, w.channel, await this.#loadValue(w.value)] as CheckpointPendingWrite),
    );
  }

  async #writes(thread: string, ns: string, id: string): Promise<WriteRecord[]> {
    const path = this.#path(thread, ns, `${encodeSegment(id)}.writes.json`);
    const text = await this.#cap.readText(path).catch(nullIfMissing);
    return text === null ? [] : parseWrites(text, path);
  }

  async #readCheckpoint(thread: string, ns: string, id: string): Promise<CheckpointFile | null> {
    const path = this.#path(thread, ns, `${encodeSegment(id)}.json`);
    const text = await this.#cap.readText(path).catch(nullIfMissing);
    return text === null ? null : parseCheckpoint(text, path);
  }

  /** Checkpoint ids of a thread's namespace, newest first (ids are uuid6: their order is their time). */
  async #checkpointIds(thread: string, ns: string): Promise<string[]> {
    const ids: string[] = [];
    for await (const entry of this.#entries(join(this.#threadPath(thread), nsFolder(ns)), 1)) {
      if (entry.type !== "file" || !entry.name.endsWith(".json") || entry.name.endsWith(".writes.json")) continue;
      const id = decodeSegment(entry.name.slice(0, -".json".length));
      if (id !== null) ids.push(id);
    }
    return ids.sort().reverse();
  }

  async #namespaces(thread: string): Promise<string[]> {
    const namespaces: string[] = [];
    for await (const entry of this.#entries(this.#threadPath(thread), 1)) {
      if (entry.type !== "dir" || !entry.name.startsWith("ns-")) continue;
      const ns = decodeSegment(entry.name.slice(3));
      if (ns !== null) namespaces.push(ns);
    }
    return namespaces;
  }

  async #threads(): Promise<string[]> {
    if (this.#thread !== undefined) return [this.#thread];
    const threads: string[] = [];
    for await (const entry of this.#entries(this.#folder, 1)) {
      if (entry.type !== "dir") continue;
      const thread = decodeSegment(entry.name);
      if (thread !== null && thread !== "") threads.push(thread);
    }
    return threads;
  }

  /** A folder's entries page by page; a folder that is not there has none. */
  async *#entries(path: string, depth: number): AsyncGenerator<ListEntry> {
    let cursor: string | undefined;
    do {
      const page = await this.#cap.listPage(path, { cursor, depth, limit: 1000 }).catch(nullIfMissing);
      if (page === null) return;
      yield* page.entries;
      cursor = page.cursor ?? undefined;
    } while (cursor !== undefined);
  }

  async #load(value: Stored, file: CheckpointFile, field: string): Promise<unknown> {
    try {
      return await this.serde.loadsTyped(...unstored(value));
    } catch (error) {
      throw new CheckpointFileError(
        `${file.thread_id}/${file.checkpoint_id}`,
        `its ${field} does not deserialize (${(error as Error).message})`,
      );
    }
  }

  #loadValue(value: Stored): Promise<unknown> {
    return this.serde.loadsTyped(...unstored(value));
  }

  // ---- writing ----

  /** Read-modify-write of a writes file, only over the version read; retried when another writer came between. */
  async #update(path: string, change: (current: WriteRecord[]) => WriteRecord[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const bytes = await this.#cap.read(path).catch(nullIfMissing);
      const current = bytes === null ? [] : parseWrites(new TextDecoder().decode(bytes), path);
      const body: WritesFile = { format: 1, writes: change(current) };
      // The sha256 of exactly the bytes read: the write lands only over them.
      const precondition = bytes === null ? { ifNoneMatch: "*" } : { ifMatch: `sha256:${await sha256Hex(bytes)}` };
      try {
        await this.#cap.write(path, json(body), { contentType: "application/json", ...precondition });
        return;
      } catch (error) {
        if (!isCapError(error) || error.code !== "precondition_failed" || attempt >= this.#attempts) throw error;
        // Another writer's version landed first: read theirs and apply ours again, after a short, random wait.
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * attempt));
      }
    }
  }

  #threadPath(thread: string): string {
    if (this.#thread !== undefined) {
      if (thread !== this.#thread) throw new TypeError("this saver holds one thread only, and not that one");
      return this.#folder;
    }
    return this.#folder === "" ? encodeSegment(thread) : `${this.#folder}/${encodeSegment(thread)}`;
  }

  #blobPath(thread: string, ns: string, channel: string, version: string | number): string {
    return this.#path(thread, ns, `channels/${encodeSegment(channel)}/${encodeSegment(String(version))}.json`);
  }

  #path(thread: string, ns: string, name: string): string {
    return join(this.#threadPath(thread), nsFolder(ns), name);
  }
}

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

const join = (...parts: string[]) => parts.filter((p) => p !== "").join("/");
const nsFolder = (ns: string) => `ns-${encodeSegment(ns)}`;
const json = (value: unknown) => `${JSON.stringify(value, null, 1)}\n`;

function nullIfMissing(error: unknown): null {
  if (isCapError(error) && error.code === "not_found") return null;
  throw error;
}

const ignoreMissing = (error: unknown) => void nullIfMissing(error);

function parseCheckpoint(text: string, path: string): CheckpointFile {
  const file = parseJson(text, path) as Partial<CheckpointFile>;
  if (
    file.format !== 1 ||
    typeof file.thread_id !== "string" ||
    typeof file.checkpoint_ns !== "string" ||
    typeof file.checkpoint_id !== "string" ||
    !(file.parent_checkpoint_id === null || typeof file.parent_checkpoint_id === "string") ||
    !isStored(file.checkpoint) ||
    !isStored(file.metadata)
  )
    throw new CheckpointFileError(path, "it is not a checkpoint file of format 1");
  return file as CheckpointFile;
}

function parseChannel(text: string, path: string): ChannelFile {
  const file = parseJson(text, path) as Partial<ChannelFile>;
  if (file.format !== 1 || typeof file.channel !== "string" || !(file.value === null || isStored(file.value)))
    throw new CheckpointFileError(path, "it is not a channel file of format 1");
  return file as ChannelFile;
}

function parseWrites(text: string, path: string): WriteRecord[] {
  const file = parseJson(text, path) as Partial<WritesFile>;
  const ok =
    file.format === 1 &&
    Array.isArray(file.writes) &&
    file.writes.every(
      (w) =>
        typeof w?.task_id === "string" &&
        Number.isInteger(w.idx) &&
        typeof w.channel === "string" &&
        typeof w.task_path === "string" &&
        isStored(w.value),
    );
  if (!ok) throw new CheckpointFileError(path, "it is not a writes file of format 1");
  return file.writes as WriteRecord[];
}

function parseJson(text: string, path: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new CheckpointFileError(path, "it is not JSON");
  }
}

function isStored(value: unknown): value is Stored {
  const v = value as Partial<Stored> | null;
  return typeof v === "object" && v !== null && typeof v.type === "string" && "value" in v;
}
