/**
 * Cap'n Web RPC against the real launcher, hostile: batches too big, too
 * deep or malformed refused cheaply and whole, sessions past their bounds
 * and rates, and the request log naming caps by id. Its own vault: the
 * floods must not slow other files' caps, and the log is this vault's.
 */
import { WebSocket as UndiciWebSocket } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AdminClient, connect, connectLive, disconnect, FsCap } from "../../clients/typescript/index.ts";
import { refusal as contractRefusal } from "../../shared/refusals.ts";
import { RPC_LIMITS } from "../../worker/rpc/rpc-limits.ts";
import { httpRefusal, installRpcClient, plainFetch, postBatch, uninstallRpcClient } from "./rpc-test-client.ts";
import { startTestVault, type TestVault } from "./test-vault.ts";

let vault: TestVault;
let fs: FsCap;

beforeAll(async () => {
  installRpcClient();
  vault = await startTestVault();
  const admin = new AdminClient(vault.url, vault.adminToken);
  fs = await admin.mintRoot({ backend: "r2", prefix: "rpc-test/", label: "rpc" });
  await fs.write("skills/hermes-fs-as-cap/SKILL.md", "# skill\n");
  await fs.write("skills/other-skill/SKILL.md", "# other\n");
}, 90_000);

afterAll(async () => {
  uninstallRpcClient();
  await vault?.stop();
});

describe("hostile batches", () => {
  it("are refused cheaply, as contract errors, while other caps are served", async () => {
    const other = await fs.subdir({ path: "skills" });
    const huge = "x".repeat(9 * 1024 * 1024);
    const deep = `["push",["pipeline",0,["read"],[${"[".repeat(100_000)}${"]".repeat(100_000)}]]]`;
    const many = Array.from({ length: 5000 }, () => '["pull",1]').join("\n");
    const forward = '["push",["pipeline",7,["read"],["a"]]]\n["pull",1]';
    const self = '["push",["pipeline",1,["read"],["a"]]]\n["pull",1]';
    const hostile = [huge, deep, many, forward, self, "not json"].map((body) => postBatch(fs.url, body));
    const [normal, ...answers] = await Promise.all([
      new FsCap(other.url).readText("hermes-fs-as-cap/SKILL.md"),
      ...hostile,
    ]);
    expect(normal).toBe("# skill\n");
    const refusals = await Promise.all(answers.map(async (a) => ({ status: a.status, ...(await httpRefusal(a)) })));
    expect(refusals.map((r) => [r.status, r.code])).toEqual([
      [413, "too_large"],
      [400, "bad_request"],
      [413, "too_large"],
      [400, "bad_request"],
      [400, "bad_request"],
      [400, "bad_request"],
    ]);
    expect(refusals[1]!.message).toBe("RPC messages nest at most 64 levels deep");
  });

  it("refused whole: a bad message anywhere in a batch means none of its calls ran", async () => {
    const write = (name: string) => `["push",["pipeline",0,["write"],["refused/${name}","data"]]]`;
    const answers = await Promise.all([
      postBatch(fs.url, `${write("a.txt")}\n["pull",1]\nnot json`),
      postBatch(fs.url, `${write("b.txt")}\n["push",["pipeline",9,["read"],["x"]]]\n["pull",1]`),
      postBatch(fs.url, `${write("c.txt")}\n["release",0,5]`),
    ]);
    expect(answers.map((a) => a.status)).toEqual([400, 400, 400]);
    const listing = await plainFetch(`${fs.url}/list?path=refused`);
    expect(await httpRefusal(listing)).toEqual({ code: "not_found", message: "nothing at that path" });
  });

  it("over a WebSocket, a message too deep or too big ends that session only", async () => {
    const wsUrl = `${fs.url.replace(/^http/, "ws")}/rpc`;
    const ends = await Promise.all(
      [`["push",${"[".repeat(100_000)}${"]".repeat(100_000)}]`, `["push","${"x".repeat(9 * 1024 * 1024)}"]`].map(
        (message) =>
          new Promise<string[]>((resolve) => {
            const received: string[] = [];
            const socket = new UndiciWebSocket(wsUrl);
            socket.onopen = () => socket.send(message);
            socket.onmessage = (event) => received.push(String(event.data));
            socket.onclose = () => resolve(received);
          }),
      ),
    );
    // capnweb aborts the session, saying why with a fixed text, and closes it.
    const abort = [
      "abort",
      ["error", "Error", "no such method on the cap, or a malformed RPC message", null, { code: "bad_request" }],
    ];
    expect(ends.map((messages) => messages.map((m) => JSON.parse(m)))).toEqual([[abort], [abort]]);
    const live = connectLive(fs.url);
    try {
      expect(await live.subdir("skills").readText("hermes-fs-as-cap/SKILL.md")).toBe("# skill\n");
    } finally {
      disconnect(live);
    }
  });

  it("a batch past its call bound is refused whole: none of its calls ran", async () => {
    const rpc = connect(fs.url);
    const calls = Array.from({ length: RPC_LIMITS.batchCalls + 1 }, (_, i) =>
      rpc.write(`over-bound/${i}.txt`, "x").then(
        () => "ok",
        (e: { code: string }) => e.code,
      ),
    );
    const outcomes = await Promise.all(calls);
    expect(new Set(outcomes)).toEqual(new Set(["too_large"]));
    const listing = await plainFetch(`${fs.url}/list?path=over-bound`);
    expect(await httpRefusal(listing)).toEqual({ code: "not_found", message: "nothing at that path" });
  }, 60_000);

  it("a WebSocket session runs no more calls than its bucket allows, refuses the rest with the contract's code, and stays usable", async () => {
    const live = connectLive(fs.url);
    try {
      await live.stat("skills");
      // A burst and half the refusals a session may get, at once. The session's clock cannot run longer than
      // the client's, so at most a burst and what refilled meanwhile may run: the bound, not a count of
      // refusals, is what load cannot bend.
      const started = performance.now();
      const calls = Array.from({ length: RPC_LIMITS.liveCalls + RPC_LIMITS.liveRefusals / 2 }, () =>
        live.stat("skills").then(
          () => "ok",
          (e: Error & { code?: string }) => `${e.code}: ${e.message}`,
        ),
      );
      const outcomes = await Promise.all(calls);
      const seconds = (performance.now() - started) / 1000;
      const ran = outcomes.filter((o) => o === "ok").length;
      expect(ran).toBeLessThanOrEqual(RPC_LIMITS.liveCalls + Math.ceil(seconds * RPC_LIMITS.liveCallsPerSecond) + 1);
      const rate = contractRefusal("rpcCallRate", { perSecond: RPC_LIMITS.liveCallsPerSecond });
      expect(new Set(outcomes.filter((o) => o !== "ok"))).toEqual(
        ran === outcomes.length ? new Set() : new Set([`${rate.code}: ${rate.message}`]),
      );
      // The bucket refills: after a second the same session's calls run again.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect((await live.stat("skills")).type).toBe("dir");
    } finally {
      disconnect(live);
    }
  }, 60_000);

  it("a WebSocket session that keeps calling past its rate is closed, and a new one is served", async () => {
    const live = connectLive(fs.url);
    try {
      await live.stat("skills");
      // Far more than a burst and the refusals a session may get, faster than any refill could cover.
      const calls = Array.from({ length: (RPC_LIMITS.liveCalls + RPC_LIMITS.liveRefusals) * 10 }, () =>
        live.stat("skills").then(
          () => "ok",
          (e: Error) => e.message,
        ),
      );
      const outcomes = await Promise.all(calls);
      const closed = outcomes.filter((o) => o.includes("4429"));
      expect(closed.length).toBeGreaterThan(0);
      expect(closed[0]).toContain(contractRefusal("rpcFlooded").message);
    } finally {
      disconnect(live);
    }
    const fresh = connectLive(fs.url);
    try {
      expect((await fresh.stat("skills")).type).toBe("dir");
    } finally {
      disconnect(fresh);
    }
  }, 60_000);
});

describe("logs", () => {
  it("show /rpc requests by cap id, never by token", async () => {
    await connect(fs.url).info();
    const token = fs.url.slice(fs.url.lastIndexOf("/") + 1);
    expect(vault.output()).toMatch(/POST \/object\/\{[^}]+\}\/rpc 200/);
    expect(vault.output()).not.toContain(token);
  });
});
