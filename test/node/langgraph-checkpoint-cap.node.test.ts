/**
 * What CapCheckpointSaver adds to LangGraph's contract (the contract itself is
 * test/node/langgraph-checkpoint.node.test.ts): checkpoints as readable files,
 * one thread shared by a child cap, two processes writing one checkpoint's
 * writes, and bad input refused with nothing half-written.
 */
import { emptyCheckpoint, uuid6 } from "@langchain/langgraph-checkpoint";
import { beforeAll, describe, expect, it } from "vitest";
import { CapCheckpointSaver, CheckpointFileError } from "../../clients/langgraph/index.ts";
import { FsCap } from "../../clients/typescript/index.ts";
import { type SharedVault, sharedVault } from "./shared-vault.ts";

let vault: SharedVault;
beforeAll(async () => {
  vault = await sharedVault("langgraph-checkpoint-cap");
});

const q = (p: string) => `?path=${encodeURIComponent(p)}`;
async function httpText(capUrl: string, path: string): Promise<string> {
  const res = await fetch(`${capUrl}/file${q(path)}`);
  return res.status === 200 ? res.text() : `(status ${res.status})`;
}
async function files(capUrl: string, path = ""): Promise<string[]> {
  return (await new FsCap(capUrl).listPage(path, { depth: 0, limit: 1000 })).entries.map((e) => e.name).sort();
}
const config = (thread_id: string, checkpoint_id?: string) => ({
  configurable: { thread_id, checkpoint_ns: "", ...(checkpoint_id ? { checkpoint_id } : {}) },
});
function checkpointOf(values: Record<string, unknown>) {
  const c = emptyCheckpoint();
  c.id = uuid6(-1);
  c.channel_values = values;
  c.channel_versions = Object.fromEntries(Object.keys(values).map((k) => [k, 1]));
  return c;
}
const metadata = { source: "input" as const, step: -1, parents: {} };
async function codeOf(call: Promise<unknown>): Promise<string> {
  try {
    await call;
    return "ok";
  } catch (error) {
    return (error as { code?: string }).code ?? (error as Error).name;
  }
}

describe.each(["r2", "disk"] as const)("CapCheckpointSaver on %s", (backend) => {
  const capOf = async () =>
    (
      await new FsCap(backend === "r2" ? vault.rootCapUrl : vault.diskCapUrl).subdir({
        path: `c-${crypto.randomUUID()}`,
      })
    ).url;

  it("keeps a checkpoint as JSON files a person can read: the checkpoint, each channel's version, the writes", async () => {
    const url = await capOf();
    const saver = new CapCheckpointSaver(url, { folder: "graphs" });
    const cp = checkpointOf({ messages: ["hello"] });
    const saved = await saver.put(config("thread 1"), cp, metadata, { messages: 1 });
    await saver.putWrites(saved, [["messages", "world"]], "task-1");
    // A uuid6 is letters, digits and dashes: its file name is the id itself.
    const id = cp.id;
    expect(await files(url, "graphs")).toEqual(
      [
        "thread%201/ns-/channels/messages/1.json",
        `thread%201/ns-/${id}.json`,
        `thread%201/ns-/${id}.writes.json`,
      ].sort(),
    );
    const file = JSON.parse(await httpText(url, `graphs/thread%201/ns-/${id}.json`));
    expect(file).toMatchObject({ format: 1, thread_id: "thread 1", checkpoint_ns: "", checkpoint_id: cp.id });
    expect(JSON.parse(await httpText(url, "graphs/thread%201/ns-/channels/messages/1.json")).value).toEqual({
      type: "json",
      value: ["hello"],
    });
    const writes = JSON.parse(await httpText(url, `graphs/thread%201/ns-/${id}.writes.json`));
    expect(writes.writes).toEqual([
      { task_id: "task-1", idx: 0, channel: "messages", task_path: "", value: { type: "json", value: "world" } },
    ]);
    const tuple = await saver.getTuple(config("thread 1"));
    expect(tuple?.checkpoint.channel_values).toEqual({ messages: ["hello"] });
    expect(tuple?.pendingWrites).toEqual([["task-1", "messages", "world"]]);
  });

  it("a read-only child cap on one thread's folder shows that thread and nothing else, and refuses writes", async () => {
    const url = await capOf();
    const owner = new CapCheckpointSaver(url);
    const cp = checkpointOf({ plan: "step 1" });
    await owner.put(config("shared"), cp, metadata, { plan: 1 });
    await owner.put(config("private"), checkpointOf({ secret: "x" }), metadata, { secret: 1 });
    const child = await new FsCap(url).subdir({ path: "shared", rights: ["read", "list"] });
    const reader = new CapCheckpointSaver(child.url, { thread: "shared" });
    expect((await reader.getTuple(config("shared")))?.checkpoint.channel_values).toEqual({ plan: "step 1" });
    const listed = [];
    for await (const t of reader.list({})) listed.push(t.config.configurable?.thread_id);
    expect(listed).toEqual(["shared"]);
    // Another thread is not this saver's: refused before any request.
    await expect(reader.getTuple(config("private"))).rejects.toThrow(TypeError);
    expect(await codeOf(reader.put(config("shared"), checkpointOf({ plan: "mine" }), metadata, { plan: 2 }))).toBe(
      "forbidden",
    );
    expect(await codeOf(reader.deleteThread("shared"))).toBe("forbidden");
    expect((await owner.getTuple(config("shared")))?.checkpoint.id).toBe(cp.id);
  });

  it("two processes writing one checkpoint's writes at once lose nothing (sha256 preconditions, retried)", async () => {
    const url = await capOf();
    const a = new CapCheckpointSaver(url);
    const b = new CapCheckpointSaver(url, { attempts: 64 });
    const saved = await a.put(config("busy"), checkpointOf({}), metadata, {});
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        (i % 2 ? b : new CapCheckpointSaver(url, { attempts: 64 })).putWrites(saved, [["ch", i]], `task-${i}`),
      ),
    );
    const tuple = await a.getTuple(saved);
    expect(tuple?.pendingWrites?.map(([task]) => task).sort()).toEqual(
      Array.from({ length: 12 }, (_, i) => `task-${i}`).sort(),
    );
  });

  it("keys that spell paths stay one encoded name inside the folder; a non-string key is refused before any request", async () => {
    const url = await capOf();
    const saver = new CapCheckpointSaver(url, { folder: "in" });
    for (const thread of ["../escape", "/abs", "~home", "C:x", ".capvault-x", "a/b", "."])
      await saver.put(config(thread), checkpointOf({ v: thread }), metadata, { v: 1 });
    expect((await files(url)).every((f) => f.startsWith("in/"))).toBe(true);
    const threads = [];
    for await (const t of saver.list({})) threads.push(t.config.configurable?.thread_id);
    expect(threads.sort()).toEqual(["../escape", "/abs", "~home", "C:x", ".capvault-x", "a/b", "."].sort());
    expect((await saver.getTuple(config("../escape")))?.checkpoint.channel_values).toEqual({ v: "../escape" });
    await expect(saver.getTuple({ configurable: { thread_id: 7 } } as never)).rejects.toThrow(TypeError);
    await expect(saver.put(config(""), checkpointOf({}), metadata, {})).rejects.toThrow(TypeError);
  });

  it("a corrupted checkpoint or writes file is a CheckpointFileError naming it, and putWrites leaves it as it was", async () => {
    const url = await capOf();
    const saver = new CapCheckpointSaver(url);
    const cp = checkpointOf({});
    const saved = await saver.put(config("t"), cp, metadata, {});
    await new FsCap(url).write(`t/ns-/${cp.id}.writes.json`, "{not json");
    const error = await saver.getTuple(saved).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CheckpointFileError);
    expect(error).toMatchObject({ code: "corrupt_file", path: `t/ns-/${cp.id}.writes.json` });
    await expect(saver.putWrites(saved, [["ch", 1]], "task")).rejects.toThrow(CheckpointFileError);
    expect(await httpText(url, `t/ns-/${cp.id}.writes.json`)).toBe("{not json");
    await new FsCap(url).write(`t/ns-/${cp.id}.json`, JSON.stringify({ format: 9 }));
    await expect(saver.getTuple(config("t"))).rejects.toMatchObject({ code: "corrupt_file" });
  });

  it("a checkpoint past the cap's quota is refused (quota_exceeded) and the thread's latest checkpoint stays the last one stored", async () => {
    const url = await capOf();
    const small = await new FsCap(url).subdir({ path: "q", maxBytes: 4096 } as never);
    const saver = new CapCheckpointSaver(small.url);
    const first = checkpointOf({ v: "small" });
    await saver.put(config("t"), first, metadata, { v: 1 });
    const big = checkpointOf({ v: "x".repeat(8192) });
    big.channel_versions = { v: 2 };
    expect(await codeOf(saver.put(config("t", first.id), big, metadata, { v: 2 }))).toBe("quota_exceeded");
    expect((await saver.getTuple(config("t")))?.checkpoint.id).toBe(first.id);
  });

  it("a list past scanLimit checkpoints throws scan_limit rather than walk on; within it, it answers", async () => {
    const url = await capOf();
    const saver = new CapCheckpointSaver(url, { scanLimit: 2 });
    for (const t of ["a", "b", "c"]) await saver.put(config(t), checkpointOf({}), metadata, {});
    const walk = async (options?: { limit?: number }) => {
      const ids = [];
      for await (const tuple of saver.list({}, options)) ids.push(tuple.config.configurable?.thread_id);
      return ids;
    };
    expect(await codeOf(walk())).toBe("scan_limit");
    expect(await walk({ limit: 2 })).toHaveLength(2);
  });

  it("a revoked cap refuses every call with no_such_cap", async () => {
    const url = await capOf();
    const child = await new FsCap(url).subdir({ path: "" });
    const saver = new CapCheckpointSaver(child.url);
    await saver.put(config("t"), checkpointOf({}), metadata, {});
    await new FsCap(child.url).revoke();
    expect(await codeOf(saver.getTuple(config("t")))).toBe("no_such_cap");
    expect(await codeOf(saver.put(config("t"), checkpointOf({}), metadata, {}))).toBe("no_such_cap");
  });
});

describe("a real LangGraph graph over CapCheckpointSaver", () => {
  it("keeps a thread's state across two processes' savers, with its history, and a read-only viewer sees it", async () => {
    const { Annotation, StateGraph } = await import("@langchain/langgraph");
    const State = Annotation.Root({
      notes: Annotation<string[]>({ reducer: (a, b) => [...a, ...b], default: () => [] }),
    });
    const build = (checkpointer: CapCheckpointSaver) =>
      new StateGraph(State)
        .addNode("remember", (s: typeof State.State) => ({ notes: [`note ${s.notes.length + 1}`] }))
        .addEdge("__start__", "remember")
        .compile({ checkpointer });
    const url = (await new FsCap(vault.rootCapUrl).subdir({ path: `g-${crypto.randomUUID()}` })).url;
    const thread = { configurable: { thread_id: "alice" } };
    // Two savers, as two processes would hold: the second picks the thread up from the vault.
    expect(
      (await build(new CapCheckpointSaver(url, { folder: "threads" })).invoke({ notes: ["start"] }, thread)).notes,
    ).toEqual(["start", "note 2"]);
    const second = build(new CapCheckpointSaver(url, { folder: "threads" }));
    expect((await second.invoke({ notes: [] }, thread)).notes).toEqual(["start", "note 2", "note 3"]);
    const history = [];
    for await (const snapshot of second.getStateHistory(thread)) history.push(snapshot.values.notes?.length ?? 0);
    expect(history[0]).toBe(3);
    expect(history.length).toBeGreaterThanOrEqual(4);
    const viewerCap = await new FsCap(url).subdir({ path: "threads/alice", rights: ["read", "list"] });
    const viewer = build(new CapCheckpointSaver(viewerCap.url, { thread: "alice" }));
    expect((await viewer.getState(thread)).values.notes).toEqual(["start", "note 2", "note 3"]);
    expect(await codeOf(viewer.invoke({ notes: ["from the viewer"] }, thread))).toBe("forbidden");
  });
});
