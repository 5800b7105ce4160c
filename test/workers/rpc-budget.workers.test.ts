import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { type CapRecord, MAX_DELEGATION_DEPTH } from "../../durable-objects/cap-record.ts";
import { refusal } from "../../shared/refusals.ts";
import { BatchTransport } from "../../worker/rpc/batch-transport.ts";
import { ClosingTransport } from "../../worker/rpc/closing-transport.ts";
import { batchWork } from "../../worker/rpc/rpc-batch-check.ts";
import { RPC_LIMITS } from "../../worker/rpc/rpc-limits.ts";
import { RpcSessionBudget } from "../../worker/rpc/rpc-session-budget.ts";
import { ticksDuring } from "../turn-counter.ts";
import { capObject } from "./slow-upload.ts";
import { call, cap, child, errorCode, mintRoot } from "./vault.ts";

// A WebSocket session has no total of calls: what bounds its memory is what
// runs and waits at once. A waiting write holds its decoded message, so the
// bytes held must be bounded, not only the number of calls (2,048 waiting
// 8 MiB writes would be 16 GiB in one worker). Run in workerd, where the
// budget runs.

describe("an RPC session's budget", () => {
  it("holds at most heldBytes of writes at once, running or waiting; other calls still run", async () => {
    const budget = new RpcSessionBudget("live");
    const stuck = Promise.withResolvers<string>();
    const big = RPC_LIMITS.messageBytes;
    const held = Array.from({ length: RPC_LIMITS.heldBytes / big }, () => budget.run(() => stuck.promise, big));
    // Fewer calls than inFlight run: only the bytes held refuse the next write.
    expect(held.length).toBeLessThan(RPC_LIMITS.inFlight);
    await expect(budget.run(async () => "ran", big)).rejects.toMatchObject(refusal("rpcBytesWaiting"));
    await expect(budget.run(async () => "small")).resolves.toBe("small");
    stuck.resolve("done");
    expect(await Promise.all(held)).toEqual(held.map(() => "done"));
    // Released as they end.
    await expect(budget.run(async () => "again", big)).resolves.toBe("again");
  });
});

// A batch is judged whole before it runs, a delegation chain is bounded in
// the cap's object (so over HTTP too), a WebSocket session spends from token
// buckets, and RPC calls take turns with other requests.

const rpcLine = (on: number, method: string, args: unknown[]) =>
  JSON.stringify(["push", ["pipeline", on, [method], args]]);
const postBatch = (token: string, lines: string[]) => call("POST", `/object/${token}/rpc`, { body: lines.join("\n") });
let roots = 0;
const freshRoot = () => mintRoot(`rpc-budget-${roots++}-${crypto.randomUUID().slice(0, 8)}/`);

describe("an RPC batch over a bound", () => {
  it("past its calls is refused whole: not one of its writes ran", async () => {
    const root = await freshRoot();
    const writes = Array.from({ length: RPC_LIMITS.batchCalls + 1 }, (_, i) =>
      rpcLine(0, "write", [`w/${i}.txt`, "x"]),
    );
    const res = await postBatch(root.token, writes);
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: unknown }).error).toEqual(
      refusal("rpcTooManyCalls", { limit: RPC_LIMITS.batchCalls }),
    );
    expect(await errorCode(await cap(root.token).list("w"))).toBe("not_found");
  });

  it("past its mints is refused whole: no child was made", async () => {
    const root = await freshRoot();
    const mints = Array.from({ length: RPC_LIMITS.batchMints + 1 }, () => rpcLine(0, "subdir", [""]));
    const res = await postBatch(root.token, mints);
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: unknown }).error).toEqual(
      refusal("rpcTooManyMints", { limit: RPC_LIMITS.batchMints }),
    );
    const children = (await (await cap(root.token).children()).json()) as { children: unknown[] };
    expect(children.children).toEqual([]);
  });

  it("that waits on a promise of its client's it never resolves is refused whole, not held until it hangs", async () => {
    const root = await freshRoot();
    // Found by the fuzz: the call waited for the client, which in a batch can send nothing more, so the
    // runtime cancelled the request as hung (a 500).
    for (const lines of [
      ['["push",["promise",-1]]', '["pull",1]'],
      [JSON.stringify(["push", ["pipeline", 0, ["write"], ["p.txt", ["promise", -1]]]]), '["pull",1]'],
    ]) {
      const res = await postBatch(root.token, lines);
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: unknown }).error).toEqual(refusal("rpcUnresolvedPromise"));
    }
    expect(await errorCode(await cap(root.token).stat("p.txt"))).toBe("not_found");
  });

  it("chained deeper than its pipeline bound is refused whole", async () => {
    const root = await freshRoot();
    const chain = Array.from({ length: RPC_LIMITS.pipelineDepth + 1 }, (_, i) => rpcLine(i, "subdir", [""]));
    expect(batchWork(chain).chain).toBe(RPC_LIMITS.pipelineDepth + 1);
    // Statted, not minted: only the chain's length is over its bound.
    const stats = Array.from({ length: RPC_LIMITS.pipelineDepth + 1 }, (_, i) => rpcLine(i, "stat", [""]));
    const res = await postBatch(root.token, stats);
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: unknown }).error).toEqual(
      refusal("rpcPipelineTooDeep", { limit: RPC_LIMITS.pipelineDepth }),
    );
  });
});

describe("delegation depth", () => {
  it(`is at most ${MAX_DELEGATION_DEPTH} levels below a root, over HTTP`, async () => {
    const root = await freshRoot();
    let token = root.token;
    for (let level = 1; level <= MAX_DELEGATION_DEPTH; level++) token = (await child(cap(token), { path: "" })).token;
    const refused = await cap(token).subdir({ path: "" });
    expect(refused.status).toBe(413);
    expect(((await refused.json()) as { error: unknown }).error).toEqual(
      refusal("delegationTooDeep", { limit: MAX_DELEGATION_DEPTH }),
    );
  }, 60_000);

  it("over RPC: a pipelined chain stops at the bound, and the caps above it stay", async () => {
    const root = await freshRoot();
    const start = await child(cap(root.token), { path: "" }); // depth 1
    // 16 mints in one batch, within the batch's bounds: the 16th would be depth 17.
    const chain = Array.from({ length: RPC_LIMITS.batchMints }, (_, i) => rpcLine(i, "subdir", [""]));
    const pulls = chain.map((_, i) => JSON.stringify(["pull", i + 1]));
    const res = await postBatch(start.token, [...chain, ...pulls]);
    expect(res.status).toBe(200);
    const answers = (await res.text()).split("\n").map((line) => JSON.parse(line) as unknown[]);
    const rejected = answers.filter((a) => a[0] === "reject");
    expect(rejected[0]).toEqual([
      "reject",
      RPC_LIMITS.batchMints,
      [
        "error",
        "Error",
        refusal("delegationTooDeep", { limit: MAX_DELEGATION_DEPTH }).message,
        null,
        { code: "too_large" },
      ],
    ]);
    expect(rejected).toHaveLength(1);
  }, 60_000);

  it("a cap minted before depths were recorded counts as a root's child", async () => {
    const root = await freshRoot();
    let token = root.token;
    for (let level = 1; level <= MAX_DELEGATION_DEPTH; level++) token = (await child(cap(token), { path: "" })).token;
    await runInDurableObject(await capObject(token), async (_, state) => {
      const record = (await state.storage.get<CapRecord>("cap"))!;
      delete record.depth;
      await state.storage.put("cap", record);
    });
    const again = await child(cap(token), { path: "" });
    const record = await runInDurableObject(await capObject(again.token), (_, state) =>
      state.storage.get<CapRecord>("cap"),
    );
    expect(record?.depth).toBe(2);
  }, 60_000);
});

describe("a WebSocket session's rate", () => {
  it("refuses calls past its bucket with a contract refusal, and serves them again once it refills", async () => {
    let now = 0;
    const budget = new RpcSessionBudget("live", () => now);
    const runs = Array.from({ length: RPC_LIMITS.liveCalls }, () => budget.run(async () => "ran"));
    expect(await Promise.all(runs)).toEqual(runs.map(() => "ran"));
    const rate = refusal("rpcCallRate", { perSecond: RPC_LIMITS.liveCallsPerSecond });
    await expect(budget.run(async () => "over")).rejects.toMatchObject(rate);
    now += 1000;
    const again = Array.from({ length: RPC_LIMITS.liveCallsPerSecond }, () => budget.run(async () => "again"));
    expect(await Promise.all(again)).toEqual(again.map(() => "again"));
    await expect(budget.run(async () => "over")).rejects.toMatchObject(rate);
  });

  it("bounds mints by a bucket of their own", async () => {
    let now = 0;
    const budget = new RpcSessionBudget("live", () => now);
    for (let i = 0; i < RPC_LIMITS.liveMints; i++) await budget.run(async () => "minted", 0, true);
    await expect(budget.run(async () => "over", 0, true)).rejects.toMatchObject(
      refusal("rpcMintRate", { perSecond: RPC_LIMITS.liveMintsPerSecond }),
    );
    await expect(budget.run(async () => "a plain call")).resolves.toBe("a plain call");
    now += 1000;
    await expect(budget.run(async () => "minted", 0, true)).resolves.toBe("minted");
  });
});

describe("a WebSocket session's refusals", () => {
  it("past their bound end the session once: the flood hook runs when the bound is passed, not before", async () => {
    const now = 0;
    const budget = new RpcSessionBudget("live", () => now);
    let floods = 0;
    budget.whenFlooding(() => floods++);
    const outcome = (run: Promise<unknown>) =>
      run.then(
        () => "ran",
        () => "refused",
      );
    const burst = await Promise.all(
      Array.from({ length: RPC_LIMITS.liveCalls }, () => outcome(budget.run(async () => null))),
    );
    expect(new Set(burst)).toEqual(new Set(["ran"]));
    for (let i = 0; i < RPC_LIMITS.liveRefusals; i++) await outcome(budget.run(async () => null));
    expect(floods).toBe(0);
    await outcome(budget.run(async () => null));
    await outcome(budget.run(async () => null));
    expect(floods).toBe(1);
  });
});

describe("RPC calls", () => {
  it("take turns with other requests: each waits a turn of the runtime before it runs", async () => {
    // Calls chained on answers, each resolved at once (as an in-process
    // object's answer can be): without a turn between them they would run
    // back to back as microtasks, and no timer could fire until the last.
    const budget = new RpcSessionBudget("batch");
    budget.open();
    const chained = 100;
    const ticks = await ticksDuring(async () => {
      for (let i = 0; i < chained; i++) await budget.run(async () => i);
    });
    expect(ticks).toBeGreaterThanOrEqual(chained);
  });
});

describe("RPC transports", () => {
  // capnweb reads the next message as soon as the last was handled, and a
  // queued message is a resolved promise: without turns, a batch's lines or a
  // burst of WebSocket frames would all be parsed and started back to back.
  it("read a batch's lines with a turn of the runtime every 64 lines", async () => {
    const lines = Array.from({ length: 640 }, (_, i) => `["pull",${i}]`);
    const transport = new BatchTransport([...lines]);
    const read: string[] = [];
    const ticks = await ticksDuring(async () => {
      for (let i = 0; i < lines.length; i++) read.push(await transport.receive());
    });
    expect(read).toEqual(lines);
    expect(ticks).toBeGreaterThanOrEqual(lines.length / 64);
  });

  it("read a WebSocket's queued frames with a turn of the runtime before each", async () => {
    const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
    server.accept();
    client.accept();
    const transport = new ClosingTransport(server);
    const frames = Array.from({ length: 50 }, (_, i) => `["pull",${i}]`);
    for (const frame of frames) client.send(frame);
    // The frames arrive as one queue; wait until the first is there.
    const read = [await transport.receive()];
    const ticks = await ticksDuring(async () => {
      for (let i = 1; i < frames.length; i++) read.push(await transport.receive());
    });
    expect(read).toEqual(frames);
    expect(ticks).toBeGreaterThanOrEqual(frames.length - 1);
    client.close();
  });
});
