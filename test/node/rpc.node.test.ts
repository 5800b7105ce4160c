/**
 * Cap'n Web RPC (`/object/<token>/rpc`) against the real launcher, on both
 * transports: the hermes-fs-as-cap test vector, pipelining in one HTTP
 * request (counted at the client's fetch), refusals identical to HTTP,
 * revocation killing live stubs, versions and watch. Hostile batches and the
 * request log: rpc-hostile.node.test.ts.
 */
import { randomUUID } from "node:crypto";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { WebSocket as UndiciWebSocket } from "undici";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  AdminClient,
  CapError,
  connect,
  connectLive,
  disconnect,
  FsCap,
  type RpcCap,
  type RpcWatchMessage,
} from "../../clients/typescript/index.ts";
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
import { type SharedVault, sharedVault } from "./shared-vault.ts";

let vault: SharedVault;
let fs: FsCap;

beforeAll(async () => {
  installRpcClient();
  vault = await sharedVault("rpc");
  const admin = new AdminClient(vault.url, vault.adminToken);
  fs = await admin.mintRoot({ backend: "r2", prefix: `rpc-test-${randomUUID()}/`, label: "rpc" });
  await fs.write("skills/hermes-fs-as-cap/SKILL.md", "# skill\n");
  await fs.write("skills/other-skill/SKILL.md", "# other\n");
}, 90_000);

afterEach(() => {
  rpcRequests.length = 0;
});

afterAll(() => {
  uninstallRpcClient();
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

describe("revocation", () => {
  it("in a batch: a stub whose cap was revoked answers no_such_cap on its next call", async () => {
    const rpc = connect(fs.url);
    const child = rpc.subdir("skills");
    const revoked = child.revoke();
    const after = refusal(child.readText("hermes-fs-as-cap/SKILL.md"));
    expect(await revoked).toEqual({ revoked: true, pendingDescendants: 0 });
    expect(await after).toEqual({ code: "no_such_cap", message: "no such capability" });
  });

  it("a batch to a revoked cap is the HTTP no_such_cap, byte for byte", async () => {
    const doomed = await fs.subdir({ path: "skills" });
    await doomed.revoke();
    const answer = await postBatch(doomed.url, '["push",["pipeline",0,["info"],[]]]\n["pull",1]');
    const forged = await postBatch(`${doomed.url.slice(0, -4)}AAAA`, "");
    expect(answer.status).toBe(404);
    expect(await answer.text()).toBe(await forged.text());
    // Through the SDK, every call of the batch rejects with that refusal as a CapError.
    const calls = await Promise.all(
      [connect(doomed.url).info(), connect(doomed.url).subdir("x").stat()].map((p) => p.catch((e: unknown) => e)),
    );
    for (const error of calls) {
      expect(error).toBeInstanceOf(CapError);
      expect(error).toMatchObject({ code: "no_such_cap", status: 404, message: "no such capability" });
    }
  });

  it("connectLive where the runtime has no WebSocket says what to do, and takes one as an option", async () => {
    const global = globalThis.WebSocket;
    try {
      // As on Node 20.
      delete (globalThis as { WebSocket?: unknown }).WebSocket;
      expect(() => connectLive(fs.url)).toThrow(/connectLive needs a WebSocket: .*connectLive\(url, \{ WebSocket \}\)/);
      const live = connectLive(fs.url, { WebSocket: UndiciWebSocket as unknown as typeof WebSocket });
      try {
        expect(await live.readText("skills/hermes-fs-as-cap/SKILL.md")).toBe("# skill\n");
      } finally {
        disconnect(live);
      }
    } finally {
      globalThis.WebSocket = global;
    }
  });

  it("over a WebSocket: stubs die with their cap, and the session closes when its main cap dies", async () => {
    const main = await fs.subdir({ path: "" });
    const live = connectLive(main.url);
    try {
      const child = live.subdir("skills");
      expect(await child.readText("hermes-fs-as-cap/SKILL.md")).toBe("# skill\n");
      const childUrl = (await child.share()).url;
      expect((await plainFetch(childUrl, { method: "DELETE" })).status).toBe(204);
      expect(await refusal(child.readText("hermes-fs-as-cap/SKILL.md"))).toMatchObject({ code: "no_such_cap" });

      const sibling: RpcCap = live.subdir("skills");
      expect(await sibling.readText("hermes-fs-as-cap/SKILL.md")).toBe("# skill\n");
      // The parent dies (from elsewhere): its stubs and everything minted from it die at once.
      expect((await plainFetch(main.url, { method: "DELETE" })).status).toBe(204);
      expect(await refusal(sibling.stat(""))).toMatchObject({ code: "no_such_cap" });
      expect(await refusal(live.info())).toMatchObject({ code: "no_such_cap" });
      // That answer closed the session: the next call fails without reaching the cap.
      const closed = await refusal(live.info());
      expect(closed.message).toMatch(/closed/i);
    } finally {
      disconnect(live);
    }
  });
});

describe("versions and watch over RPC", () => {
  it("lists, reads, restores and redacts versions as the HTTP routes do", async () => {
    await fs.write("v/note.md", "one\n");
    await fs.write("v/note.md", "two\n");
    // A batch ends with its first awaited answer: one connect() per step.
    const page = await connect(fs.url).versions("v/note.md");
    expect(page.versions.map((v) => v.operation)).toEqual(["modified", "created"]);
    const first = page.versions[1]!.id;
    expect(new TextDecoder().decode(await connect(fs.url).readVersion(first))).toBe("one\n");
    const restored = await connect(fs.url).restore(first);
    expect(restored.size).toBe(4);
    expect(await fs.readText("v/note.md")).toBe("one\n");
    expect(await connect(fs.url).redact(first)).toBeNull();
    expect(await refusal(connect(fs.url).readVersion(first))).toEqual(
      await httpRefusal(await plainFetch(`${fs.url}/versions/${first}`)),
    );
    // A child never reaches a version outside its subtree: the same refusal as an unknown id.
    const other = (await connect(fs.url).versions("v/note.md")).versions[0]!.id;
    const child = connect(fs.url).subdir("skills");
    expect(await refusal(child.readVersion(other))).toEqual(await refusal(connect(fs.url).readVersion("999999999")));
  });

  it("watch calls back for a change made over HTTP, on WebSockets only, and ends when the cap is revoked", async () => {
    const main = await fs.subdir({ path: "w" });
    expect(await refusal(connect(main.url).watch(() => undefined))).toMatchObject({ code: "bad_request" });
    const live = connectLive(main.url);
    try {
      const seen: RpcWatchMessage[] = [];
      let wake = () => {};
      const next = () => new Promise<void>((resolve) => (wake = resolve));
      let arrived = next();
      await live.watch((message) => {
        seen.push(message);
        wake();
      });
      await main.write("a.md", "x");
      await arrived;
      expect(seen[0]).toMatchObject({ type: "change", path: "a.md", operation: "created", size: 1 });
      // A change outside the cap's subtree reaches no watcher of it.
      arrived = next();
      await fs.write("outside.md", "y");
      await main.write("b.md", "z");
      await arrived;
      expect(seen.map((m) => (m.type === "change" ? m.path : m.type))).toEqual(["a.md", "b.md"]);
      arrived = next();
      expect((await plainFetch(main.url, { method: "DELETE" })).status).toBe(204);
      await arrived;
      expect(seen.at(-1)).toMatchObject({ type: "end" });
    } finally {
      disconnect(live);
    }
  });
});

describe("a child's history starts at its mint, over RPC", () => {
  it("a child minted after a secret was written and deleted cannot list, read, restore, redact or watch it", async () => {
    await fs.write("floor/secret.md", "hunter2");
    await fs.delete("floor/secret.md");
    const ids = (await connect(fs.url).versions("floor/secret.md")).versions.map((v) => v.id);
    expect(ids).toHaveLength(2);
    const kid = await fs.subdir({ path: "floor" });
    const unknown = await refusal(connect(kid.url).readVersion("999999999"));
    expect((await connect(kid.url).versions("secret.md")).versions).toEqual([]);
    for (const id of ids) {
      expect(await refusal(connect(kid.url).readVersion(id))).toEqual(unknown);
      expect(await refusal(connect(kid.url).restore(id))).toEqual(unknown);
      expect(await refusal(connect(kid.url).redact(id))).toEqual(unknown);
    }
    // A child minted over RPC with history: "all" sees them; one minted without does not.
    const all = connect(fs.url).subdir("floor", { history: "all" });
    expect(new TextDecoder().decode(await all.readVersion(ids[1]!))).toBe("hunter2");
    expect(await refusal(connect(fs.url).subdir("floor").readVersion(ids[1]!))).toEqual(unknown);

    // since=0 resumes from the floor: the first change the watcher hears of is the child's own.
    const live = connectLive(kid.url);
    try {
      const seen: RpcWatchMessage[] = [];
      let wake = () => {};
      const arrived = new Promise<void>((resolve) => (wake = resolve));
      await live.watch(
        (message) => {
          seen.push(message);
          wake();
        },
        { since: "0" },
      );
      await kid.write("mine.md", "x");
      await arrived;
      expect(seen[0]).toMatchObject({ type: "change", path: "mine.md" });
    } finally {
      disconnect(live);
    }
  });
});
