import { describe, expect, it } from "vitest";
import { call, cap, child, errorCode, mintRoot } from "./vault.ts";
import { socketWatch, sseWatch, type WatchEvent } from "./watch-client.ts";

// The live change feed: server-sent events from the root's journal, scoped
// to the watching cap's subtree, resumable by version id, and closed when
// the cap is revoked.

let counter = 0;
type Cap = ReturnType<typeof cap>;

type Event = WatchEvent;

/** A cap's SSE feed, read frame by frame (watch-client.ts); `cancel` ends it from this side. */
async function watch(c: Cap, since = "") {
  const feed = await sseWatch(c.token, since);
  return { ...feed, cancel: feed.close };
}

/** A cap's WebSocket watcher (watch-client.ts). */
const socket = (c: { token: string }, since = "") => socketWatch(c.token, since);

function watchUpgrade(token: string, since = ""): Promise<Response> {
  return call("GET", `/object/${token}/watch${since ? `?since=${since}` : ""}`, { headers: { Upgrade: "websocket" } });
}

describe.each(["r2", "disk"] as const)("%s backend", (backend) => {
  const fresh = async () => {
    const minted = await mintRoot(`watch/${backend}/${++counter}/`, { backend });
    return { root: cap(minted.token), id: minted.id };
  };

  it("streams each change inside the subtree, relative to the watcher, and nothing outside it", async () => {
    const { root, id } = await fresh();
    const kid = await child(root, { path: "pub" });
    const feed = await watch(kid);
    await root.write("priv/secret.txt", "no");
    await root.write("pub/a.txt", "hello");
    await kid.move({ from: "a.txt", to: "b.txt" });
    await root.remove("pub/b.txt");
    const seen: Event[] = [];
    for (let i = 0; i < 4; i++) seen.push((await feed.next())!.data as Event);
    expect(seen.map((e) => [e.path, e.operation, e.size, e.actor])).toEqual([
      ["a.txt", "created", 5, id],
      ["a.txt", "moved", 5, kid.minted.id],
      ["b.txt", "created", 5, kid.minted.id],
      ["b.txt", "deleted", 5, id],
    ]);
    // Every field but the actor (checked above): a random base32 id can hold "priv".
    expect(JSON.stringify(seen.map(({ actor: _, ...rest }) => rest))).not.toContain("priv");
    await feed.cancel();
  });

  it("resumes after a version id, and a revoked cap's feed ends", async () => {
    const { root } = await fresh();
    await root.write("one.txt", "1");
    await root.write("two.txt", "22");
    const { versions } = (await (await call("GET", `/object/${root.token}/versions?path=one.txt`)).json()) as {
      versions: { id: string }[];
    };
    // Its history from before its mint too: what is resumed here was written before it.
    const kid = await child(root, { path: "", history: "all" });
    const feed = await watch(kid, versions[0]!.id);
    expect(((await feed.next())!.data as Event).path).toBe("two.txt");
    await root.write("three.txt", "333");
    expect(((await feed.next())!.data as Event).path).toBe("three.txt");
    expect((await kid.revoke()).status).toBe(204);
    expect(await feed.next()).toBeNull();
    expect(await errorCode(await call("GET", `/object/${kid.token}/watch`))).toBe("no_such_cap");
  });

  it("needs read, and refuses a since that is no version id", async () => {
    const { root } = await fresh();
    const lister = await child(root, { path: "", rights: ["list"] });
    expect(await errorCode(await call("GET", `/object/${lister.token}/watch`))).toBe("forbidden");
    expect(await errorCode(await call("GET", `/object/${root.token}/watch?since=x`))).toBe("bad_request");
  });
});

describe.each(["r2", "disk"] as const)("%s backend, over a WebSocket", (backend) => {
  const fresh = async () => {
    const minted = await mintRoot(`watch/ws/${backend}/${++counter}/`, { backend });
    return { root: cap(minted.token), id: minted.id };
  };

  it("a change through one cap reaches a watcher on another cap of the same subtree, as SSE sends it; a sibling sees nothing", async () => {
    const { root } = await fresh();
    const writer = await child(root, { path: "team" });
    const watcher = await child(root, { path: "team" });
    const sibling = await child(root, { path: "other" });
    const ws = await socket(watcher);
    const sse = await watch(watcher);
    const away = await socket(sibling);
    await writer.write("x.txt", "hello");
    const event = await ws.event();
    expect(event).toMatchObject({ path: "x.txt", operation: "created", size: 5, actor: writer.minted.id });
    // One serializer for both feeds: the same JSON, field for field.
    expect(event).toEqual((await sse.next())!.data);
    await sse.cancel();
    await root.write("other/marker.txt", "m");
    // The first thing the sibling hears is its own subtree's change: team/x.txt never reached it.
    expect(await away.event()).toMatchObject({ path: "marker.txt", operation: "created" });
    ws.ws.close();
    away.ws.close();
  });

  it("revoking a cap closes its sockets, and revoking an ancestor closes its descendants'", async () => {
    const { root } = await fresh();
    const mid = await child(root, { path: "m" });
    const leaf = await child(mid, { path: "n" });
    const other = await child(root, { path: "m" });
    const leafSocket = await socket(leaf);
    const midSocket = await socket(mid);
    const otherSocket = await socket(other);
    const rootSocket = await socket(root);
    expect((await mid.revoke()).status).toBe(204);
    expect(await midSocket.next()).toEqual({ closed: 1000 });
    expect(await leafSocket.next()).toEqual({ closed: 1000 });
    // Watchers of caps still alive go on.
    await root.write("m/n/after.txt", "a");
    expect(await otherSocket.event()).toMatchObject({ path: "n/after.txt" });
    expect(await rootSocket.event()).toMatchObject({ path: "m/n/after.txt" });
    // Revoked by its parent (the cascade's own path, not the holder's DELETE).
    const kid = await child(other, { path: "" });
    const kidSocket = await socket(kid);
    expect((await other.revokeChild(kid.minted.id)).status).toBe(204);
    expect(await kidSocket.next()).toEqual({ closed: 1000 });
    await root.write("m/later.txt", "l");
    expect(await otherSocket.event()).toMatchObject({ path: "later.txt" });
    otherSocket.ws.close();
    rootSocket.ws.close();
  });

  it("resumes after a version id, missing nothing across a reconnect", async () => {
    const { root } = await fresh();
    await root.write("one.txt", "1");
    await root.write("two.txt", "22");
    const res = await call("GET", `/object/${root.token}/versions?path=one.txt`);
    const [one] = ((await res.json()) as { versions: { id: string }[] }).versions;
    const kid = await child(root, { path: "", history: "all" });
    const first = await socket(kid, one!.id);
    expect((await first.event()).path).toBe("two.txt");
    await root.write("three.txt", "333");
    const three = await first.event();
    expect(three.path).toBe("three.txt");
    first.ws.close();
    // Changes while disconnected come first on the next connection, then live ones.
    await root.write("four.txt", "4");
    await root.remove("one.txt");
    const again = await socket(kid, three.version);
    await root.write("five.txt", "5");
    const seen = [await again.event(), await again.event(), await again.event()];
    expect(seen.map((e) => [e.path, e.operation])).toEqual([
      ["four.txt", "created"],
      ["one.txt", "deleted"],
      ["five.txt", "created"],
    ]);
    again.ws.close();
  });

  it("answers a forged or revoked token with the same no_such_cap as every route, and no socket", async () => {
    const { root } = await fresh();
    const kid = await child(root, { path: "" });
    expect((await kid.revoke()).status).toBe(204);
    const forged = `${root.token.slice(0, -2)}${root.token.endsWith("AA") ? "BB" : "AA"}`;
    const expected = await (await call("GET", `/object/${kid.token}`)).text();
    for (const token of [kid.token, forged]) {
      const res = await watchUpgrade(token);
      expect(res.status).toBe(404);
      expect(res.webSocket).toBeNull();
      expect(await res.text()).toBe(expected);
    }
  });

  it("needs read and a valid since, refused as plain answers; a client that speaks is closed", async () => {
    const { root } = await fresh();
    const lister = await child(root, { path: "", rights: ["list"] });
    expect(await errorCode(await watchUpgrade(lister.token))).toBe("forbidden");
    expect(await errorCode(await watchUpgrade(root.token, "x"))).toBe("bad_request");
    const chatty = await socket(root);
    chatty.ws.send("hello");
    // One-way: a message from the client ends its socket rather than waking the journal for nothing.
    expect(await chatty.next()).toEqual({ closed: 1008 });
  });
});
