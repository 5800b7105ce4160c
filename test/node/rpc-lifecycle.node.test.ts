/**
 * Cap'n Web RPC against the real launcher, over time: revocation killing
 * live stubs (in a batch and over a WebSocket), versions and watch as the
 * HTTP routes have them, and a child's history starting at its mint.
 */
import { randomUUID } from "node:crypto";
import { WebSocket as UndiciWebSocket } from "undici";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  AdminClient,
  CapError,
  connect,
  connectLive,
  disconnect,
  type FsCap,
  type RpcCap,
  type RpcWatchMessage,
} from "../../clients/typescript/index.ts";
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
  vault = await sharedVault("rpc-lifecycle");
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
