import { Agent, WebSocket as UndiciWebSocket, fetch as undiciFetch } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AdminClient, connect, connectLive, disconnect, type RpcWatchMessage } from "../../clients/typescript/index.ts";
import { type SharedVault, sharedVault } from "./shared-vault.ts";

/**
 * An RPC watch (Cap'n Web over a WebSocket) resumed by a child scoped to a
 * subfolder hears only that subfolder's changes: the backlog it replays and
 * the live ones alike, with a sibling whose name starts the same (`in2/`),
 * the parent folder and moves across the boundary around it.
 */
let vault: SharedVault;
let admin: AdminClient;
const realFetch = globalThis.fetch;
// A connection per request: a kept-alive one reused just as the server closes it fails with ECONNRESET.
const fresh = new Agent({ pipelining: 0 });

beforeAll(async () => {
  // Node 20 has no global WebSocket; capnweb (and connectLive) use the global one.
  globalThis.WebSocket ??= UndiciWebSocket as unknown as typeof WebSocket;
  globalThis.fetch = (async (input: string | URL | Request, init?: RequestInit) =>
    undiciFetch(input instanceof Request ? input.url : input, { ...init, dispatcher: fresh } as never)) as never;
  vault = await sharedVault("rpc-watch-scope");
  admin = new AdminClient(vault.url, vault.adminToken);
}, 90_000);

afterAll(async () => {
  globalThis.fetch = realFetch;
  await fresh.close();
});

describe.each(["r2", "disk"] as const)("%s backend: an RPC watch resumed by a subfolder's child", (backend) => {
  it("replays and streams nothing from outside the subfolder", async () => {
    const root = await admin.mintRoot({ backend, prefix: `rpc-watch-scope-${backend}/` });
    const kid = await root.subdir({ path: "in" });
    await root.write("in/first.md", "1");
    const [first] = (await connect(kid.url).versions("first.md")).versions;

    await root.write("out.md", "o");
    await root.write("in/a.md", "a");
    await root.write("in2/leak.md", "l");
    await root.write("in/b.md", "bb");
    await root.move("in/a.md", "elsewhere/a.md");
    await root.write("elsewhere/c.md", "c");
    await root.move("elsewhere/c.md", "in/c.md");
    await root.delete("in2/leak.md");

    const live = connectLive(kid.url);
    try {
      const seen: RpcWatchMessage[] = [];
      let wanted = 0;
      let wake = () => {};
      const count = (n: number) =>
        new Promise<void>((resolve) => {
          wanted = n;
          wake = resolve;
          if (seen.length >= wanted) resolve();
        });
      let arrived = count(4);
      await live.watch(
        (message) => {
          seen.push(message);
          if (seen.length >= wanted) wake();
        },
        { since: first!.id },
      );
      await arrived;
      arrived = count(5);
      await root.write("in2/live.md", "x");
      await root.write("in/live.md", "y");
      await arrived;
      expect(seen.map((m) => (m.type === "change" ? [m.path, m.operation] : [m.type]))).toEqual([
        ["a.md", "created"],
        ["b.md", "created"],
        ["a.md", "moved"],
        ["c.md", "created"],
        ["live.md", "created"],
      ]);
      // Every field but the actor: a random base32 id can hold "in2" or "leak".
      const text = JSON.stringify(seen.map((m) => (m.type === "change" ? { ...m, actor: undefined } : m)));
      for (const outside of ["out.md", "in2", "leak", "elsewhere"]) expect(text).not.toContain(outside);
    } finally {
      disconnect(live);
    }
  });
});
