/**
 * Cap'n Web RPC (`/object/<token>/rpc`) against the real launcher, on both
 * transports: the hermes-fs-as-cap test vector, pipelining in one HTTP
 * request (counted at the client's fetch), refusals identical to HTTP,
 * hostile batches refused cheaply, and the request log. Its own vault: the
 * floods must not slow other files' caps, and the log is this vault's.
 * Revocation, versions and watch: rpc-lifecycle.node.test.ts.
 */
import { mkdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { WebSocket as UndiciWebSocket } from "undici";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { AdminClient, connect, connectLive, disconnect, FsCap } from "../../clients/typescript/index.ts";
import { refusal as contractRefusal } from "../../shared/refusals.ts";
import { RPC_LIMITS } from "../../worker/rpc/rpc-limits.ts";
import {
  httpRefusal,
  installRpcClient,
  plainFetch,
  postBatch,
  refusal,
  rpcRequests,
  uninstallRpcClient,
} from "./rpc-test-client.ts";
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

afterEach(() => {
  rpcRequests.length = 0;
});

afterAll(async () => {
  uninstallRpcClient();
  await vault?.stop();
});

describe("the hermes-fs-as-cap test vector over RPC", () => {
  it("reads through a pipelined subdir and refuses the hostile paths with the contract's codes", async () => {
    const rpc = connect(fs.url);
    const [text, escapes, absolute, subEscape] = await Promise.all([
      rpc.subdir("skills").readText("hermes-fs-as-cap/SKILL.md"),
      refusal(rpc.read("../../../etc/passwd")),
      refusal(rpc.read("/etc/passwd")),
      refusal(rpc.subdir("skills").read("../other-skill/SKILL.md")),
    ]);
    expect(text).toBe("# skill\n");
    expect(escapes).toEqual({ code: "path_escapes", message: "path escapes" });
    expect(absolute).toEqual({ code: "absolute_path", message: "absolute paths forbidden" });
    expect(subEscape.code).toBe("path_escapes");
    expect(rpcRequests).toHaveLength(1);
  });

  it("makes and removes folders as PUT and DELETE /folder do, refusing as they do", async () => {
    // One HTTP batch per call: a batch ends with its answers.
    const rpc = () => connect(fs.url);
    expect(await rpc().makeFolder("made/deep")).toBeNull();
    expect(await fs.stat("made/deep")).toMatchObject({ type: "dir" });
    const notEmpty = await refusal(rpc().removeFolder("made"));
    const overHttp = await httpRefusal(await plainFetch(`${fs.url}/folder?path=made`, { method: "DELETE" }));
    expect(notEmpty).toEqual({ code: "conflict", message: overHttp.message });
    expect(overHttp.code).toBe("conflict");
    expect(await rpc().removeFolder("made/deep")).toBeNull();
    expect((await refusal(rpc().makeFolder("../x"))).code).toBe("path_escapes");
  });

  it("on the disk backend, including the symlink out of the root", async () => {
    await mkdir(path.join(vault.diskRoot, "skills/hermes-fs-as-cap"), { recursive: true });
    await writeFile(path.join(vault.diskRoot, "skills/hermes-fs-as-cap/SKILL.md"), "# on disk\n");
    await symlink("/etc/passwd", path.join(vault.diskRoot, "symlink-to-outside"));
    const disk = connect(vault.diskCapUrl);
    const [text, outside] = await Promise.all([
      disk.subdir("skills").readText("hermes-fs-as-cap/SKILL.md"),
      refusal(disk.read("symlink-to-outside")),
    ]);
    expect(text).toBe("# on disk\n");
    expect(outside).toEqual({ code: "outside_root", message: "resolved outside root" });
  });
});

describe("pipelining", () => {
  it("subdir → subdir → readText is exactly one HTTP request", async () => {
    await fs.write("a/b/c.txt", "deep");
    expect(await connect(fs.url).subdir("a").subdir("b").readText("c.txt")).toBe("deep");
    expect(rpcRequests.map((r) => r.status)).toEqual([200]);
  });

  it(`${RPC_LIMITS.batchCalls} pipelined reads (a batch's most) complete in one batch`, async () => {
    await fs.write("many/one.txt", "x");
    const rpc = connect(fs.url);
    const folder = rpc.subdir("many");
    const reads = Array.from({ length: RPC_LIMITS.batchCalls - 1 }, () => folder.readText("one.txt"));
    const texts = await Promise.all(reads);
    expect(texts.every((t) => t === "x")).toBe(true);
    expect(texts).toHaveLength(RPC_LIMITS.batchCalls - 1);
    expect(rpcRequests).toHaveLength(1);
  }, 60_000);

  it("a pipelined subdir mints a real child, listed by its parent, whose token only share() reveals", async () => {
    const rpc = connect(fs.url);
    const child = rpc.subdir("skills", { rights: ["read"], label: "rpc child" });
    const [info, shared] = await Promise.all([child.info(), child.share()]);
    expect(info.rights).toEqual(["read"]);
    expect(shared.url).toContain(shared.token);
    expect(await new FsCap(shared.url).readText("hermes-fs-as-cap/SKILL.md")).toBe("# skill\n");
    const children = await fs.childrenPage();
    expect(JSON.stringify(children)).toContain(info.id);

    // An hour unless asked otherwise: children minted per call do not pile up forever.
    const expires = (at: string | null) => (at === null ? null : Date.parse(at) - Date.now());
    expect(expires(info.expiresAt)).toBeGreaterThan(3000_000);
    expect(expires(info.expiresAt)).toBeLessThanOrEqual(3600_000);
    expect(expires((await connect(fs.url).subdir("skills", { ttlSeconds: 60 }).info()).expiresAt)).toBeLessThanOrEqual(
      60_000,
    );
    expect((await connect(fs.url).subdir("skills", { ttlSeconds: null }).info()).expiresAt).toBeNull();

    // Without share(), no answer carries a cap URL or token.
    rpcRequests.length = 0;
    const again = connect(fs.url).subdir("skills", { rights: ["read"] });
    expect((await again.info()).rights).toEqual(["read"]);
    expect(rpcRequests[0]!.body).not.toMatch(/object\//);
  });
});

describe("refusals are the HTTP contract's", () => {
  it("rights and escapes answer the same code and message as over HTTP", async () => {
    const reader = await fs.subdir({ path: "skills", rights: ["read", "list"] });
    const rpc = connect(reader.url);
    const cases: [Promise<unknown>, Promise<Response>][] = [
      [rpc.write("x.txt", "data"), plainFetch(`${reader.url}/file?path=x.txt`, { method: "PUT", body: "data" })],
      [
        rpc.delete("hermes-fs-as-cap/SKILL.md"),
        plainFetch(`${reader.url}/file?path=hermes-fs-as-cap/SKILL.md`, { method: "DELETE" }),
      ],
      [
        rpc.subdir("other-skill"),
        plainFetch(`${reader.url}/subdir`, { method: "POST", body: '{"path":"other-skill"}' }),
      ],
      [rpc.read("../other-skill/SKILL.md"), plainFetch(`${reader.url}/file?path=../other-skill/SKILL.md`)],
      [rpc.stat("C:/Windows"), plainFetch(`${reader.url}/stat?path=C:/Windows`)],
      [rpc.list("a//b"), plainFetch(`${reader.url}/list?path=a//b`)],
      [rpc.read("missing.md"), plainFetch(`${reader.url}/file?path=missing.md`)],
    ];
    const overRpc = await Promise.all(cases.map(([call]) => refusal(call)));
    const http = await Promise.all(cases.map(async ([, response]) => httpRefusal(await response)));
    expect(overRpc).toEqual(http);
    expect(overRpc.map((r) => r.code)).toEqual([
      "forbidden",
      "forbidden",
      "forbidden",
      "path_escapes",
      "absolute_path",
      "invalid_path",
      "not_found",
    ]);
  });

  it("a refusal over RPC is audited as over HTTP", async () => {
    const reader = await fs.subdir({ path: "skills", rights: ["read"] });
    expect((await refusal(connect(reader.url).read("../x"))).code).toBe("path_escapes");
    expect((await plainFetch(`${reader.url}/file?path=../x`)).status).toBe(400);
    // Identical refusals share a line: the RPC one and the HTTP one make a count of 2.
    const trail = (await (await plainFetch(`${reader.url}/audit`)).json()) as {
      entries: { op: string; path: string; outcome: string; count: number }[];
    };
    expect(trail.entries.find((e) => e.path === "../x")).toMatchObject({
      op: "read",
      outcome: "path_escapes",
      count: 2,
    });
  });

  it("reads are bounded: one file, and all of a batch's reads together", async () => {
    const four = new Uint8Array(4 * 1024 * 1024).fill(0x61);
    await fs.write("big/four.bin", four);
    await fs.write("big/over.bin", new Uint8Array(four.byteLength + 1));
    const rpc = connect(fs.url);
    const over = refusal(rpc.read("big/over.bin"));
    const reads = Array.from({ length: 5 }, () =>
      rpc.read("big/four.bin").then(
        (bytes) => bytes.byteLength,
        (e: { code: string; message: string }) => e.message,
      ),
    );
    expect(await over).toEqual({
      code: "too_large",
      message: "reads over RPC are limited to 4194304 bytes; GET /file has no limit",
    });
    const outcomes = await Promise.all(reads);
    expect(outcomes.filter((o) => o === four.byteLength)).toHaveLength(4);
    expect(outcomes).toContain("an RPC batch reads at most 16777216 bytes in all");
  }, 60_000);

  it("arguments of the wrong type are bad requests, never a crash", async () => {
    const rpc = connect(fs.url) as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    const [path, bytes, option, unknown] = await Promise.all([
      refusal(rpc.read!(42)),
      refusal(rpc.write!("x.txt", { not: "bytes" })),
      refusal(rpc.subdir!("skills", { rihgts: ["read"] })),
      refusal(rpc.rootPrefix!()),
    ]);
    expect(path.code).toBe("bad_request");
    expect(bytes.code).toBe("bad_request");
    expect(option).toEqual({ code: "bad_request", message: 'unknown field "rihgts"' });
    // capnweb's own errors leave with a fixed text, never its message or a stack.
    expect(unknown).toEqual({ code: "bad_request", message: "no such method on the cap, or a malformed RPC message" });
    // The client's stub will not send a call of `constructor`; a raw batch does.
    const raw = await postBatch(fs.url, '["push",["pipeline",0,["constructor"],["x"]]]\n["pull",1]');
    expect(JSON.parse(await raw.text())).toEqual([
      "reject",
      1,
      ["error", "Error", "no such method on the cap, or a malformed RPC message", null, { code: "bad_request" }],
    ]);
  });
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
    // Every call in one message: the bucket is spent and refused past its refusals before any time passes,
    // so the close does not depend on how fast this client sends or the vault reads (messages sent one by
    // one are read a turn apart, and a loaded vault reads them slower than the bucket refills).
    const socket = new UndiciWebSocket(`${fs.url.replace(/^http/, "ws")}/rpc`);
    const closed = new Promise<{ code: number; reason: string }>((resolve) =>
      socket.addEventListener("close", (e) => resolve({ code: e.code, reason: e.reason })),
    );
    await new Promise((resolve, reject) => {
      socket.addEventListener("open", resolve);
      socket.addEventListener("error", reject);
    });
    const stat = ["pipeline", 0, ["stat"], ["skills"]];
    const calls = Array.from({ length: (RPC_LIMITS.liveCalls + RPC_LIMITS.liveRefusals) * 2 }, () => stat);
    socket.send(JSON.stringify(["push", [calls]]));
    expect(await closed).toEqual({ code: 4429, reason: contractRefusal("rpcFlooded").message });
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
