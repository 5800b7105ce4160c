import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { MAX_WATCHERS, MAX_WATCHERS_PER_CAP } from "../../durable-objects/watch-feed.ts";
import { DEFAULT_RETENTION } from "../../shared/retention.ts";
import { capObject, setExpiry } from "./slow-upload.ts";
import { cap, child, mintRoot } from "./vault.ts";
import { socketReader, socketWatch, sseWatch, type WatchEvent } from "./watch-client.ts";

// The live change feed's bounds (part one: watch.workers.test.ts): a root's
// most watchers and how they are shared, what a WebSocket watcher leaves in
// the journal, expiry, its connection, and a watcher's queue. Prefixes differ
// from part one's: the workers project runs both files in one workerd.

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

/** A socket straight from a root's journal, as the worker asks for one once a cap admitted it. */
async function journalSocket(
  prefix: string,
  watcher: { scope: string; expiresAt: number | null; since: number | null },
) {
  const journal = env.JOURNALS.get(env.JOURNALS.idFromName(`r2:${prefix}`));
  const res = await journal.fetch("https://journal.internal/watch", {
    headers: { Upgrade: "websocket", "capvault-watcher": JSON.stringify({ capId: "test", ...watcher }) },
  });
  return socketReader(res);
}

describe("a root holding its most watchers", () => {
  it("lets a cap's streams dropped by their readers end only its own oldest, never another cap's watcher", async () => {
    const prefix = `watch/full/${++counter}/`;
    const root = cap((await mintRoot(prefix)).token);
    const owner = await watch(root);
    // Streams their readers dropped: the runtime never tells the journal (no cancel comes back over RPC).
    const journal = env.JOURNALS.get(env.JOURNALS.idFromName(`r2:${prefix}`));
    for (let i = 0; i < MAX_WATCHERS; i++) {
      const opened = await journal.watch("", null, "dropper");
      expect(opened.ok, `watcher ${i + 2}`).toBe(true);
      if (!opened.ok) return;
      const reader = opened.value.getReader();
      await reader.read();
      await reader.cancel();
    }
    await root.write("a.txt", "a");
    expect(((await owner.next())!.data as Event).path).toBe("a.txt");
    await owner.cancel();
  });

  it("ends a read cap's own oldest watcher past its share, over HTTP, and leaves the owner's alone", async () => {
    const prefix = `watch/share/${++counter}/`;
    const root = cap((await mintRoot(prefix)).token);
    const owner = await watch(root);
    const ownerSocket = await socket(root);
    const reader = await child(root, { path: "empty", rights: ["read"] });
    const feeds = [];
    for (let i = 0; i <= MAX_WATCHERS_PER_CAP; i++) feeds.push(await watch(reader));
    await root.write("a.txt", "a");
    expect(((await owner.next())!.data as Event).path).toBe("a.txt");
    expect(await ownerSocket.event()).toMatchObject({ path: "a.txt" });
    await root.write("empty/b.txt", "b");
    // The reader's first watcher ended (to resume) when its share was full; the others see the change.
    expect(await feeds[0]!.next()).toEqual({ event: "resume", data: { since: "0" } });
    expect(await feeds[0]!.next()).toBeNull();
    for (const feed of feeds.slice(1)) expect(((await feed.next())!.data as Event).path).toBe("b.txt");
    expect(((await owner.next())!.data as Event).path).toBe("empty/b.txt");
    for (const feed of [owner, ...feeds.slice(1)]) await feed.cancel();
    ownerSocket.ws.close();
  });

  it("when full, ends a watcher of the cap holding the most, never one of a cap holding fewer", async () => {
    const prefix = `watch/fair/${++counter}/`;
    const root = cap((await mintRoot(prefix)).token);
    const owner = await watch(root);
    const journal = env.JOURNALS.get(env.JOURNALS.idFromName(`r2:${prefix}`));
    const open = async (capId: string) => {
      const opened = await journal.watch("", null, capId);
      if (!opened.ok) throw new Error(`watcher of ${capId}`);
      const reader = opened.value.getReader();
      await reader.read();
      return reader;
    };
    // Caps at their share fill the root but for one place; one more fills it.
    const full = MAX_WATCHERS / MAX_WATCHERS_PER_CAP - 1;
    const heavy: ReadableStreamDefaultReader<Uint8Array>[][] = [];
    for (let c = 0; c < full; c++) {
      heavy.push([]);
      for (let i = 0; i < MAX_WATCHERS_PER_CAP; i++) heavy[c]!.push(await open(`heavy${c}`));
    }
    const light = [];
    for (let i = 0; i < MAX_WATCHERS_PER_CAP - 1; i++) light.push(await open("light"));
    const resume = 'event: resume\ndata: {"since":"0"}\n\n';
    const ended = async (reader: ReadableStreamDefaultReader<Uint8Array>) => {
      expect(new TextDecoder().decode((await reader.read()).value)).toBe(resume);
      expect((await reader.read()).done).toBe(true);
    };
    // The root is full: a cap holding none ends the oldest of a cap holding the most.
    const newcomer = await open("newcomer");
    await ended(heavy[0]![0]!);
    // One that would then hold as many as the most ends its own oldest.
    light.push(await open("light"));
    await ended(light[0]!);
    const second = await open("second");
    await ended(heavy[1]![0]!);
    await root.write("a.txt", "a");
    expect(((await owner.next())!.data as Event).path).toBe("a.txt");
    const live = [newcomer, second, ...light.slice(1), ...heavy.flatMap((h, c) => (c < 2 ? h.slice(1) : h))];
    expect(live.length).toBe(MAX_WATCHERS - 1);
    for (const reader of live)
      expect(new TextDecoder().decode((await reader.read()).value)).toMatch(/^id: \d+\ndata: .*"path":"a.txt"/);
    for (const reader of live) await reader.cancel();
    await owner.cancel();
  });
});

describe("WebSocket watchers at the root's limit", () => {
  it("take places among the streams: a cap past its share ends its own oldest stream, not its socket", async () => {
    const prefix = `watch/mixed/${++counter}/`;
    const root = cap((await mintRoot(prefix)).token);
    const ws = await socket(root);
    const journal = env.JOURNALS.get(env.JOURNALS.idFromName(`r2:${prefix}`));
    const rootId = ((await (await root.info()).json()) as { id: string }).id;
    const readers: ReadableStreamDefaultReader<Uint8Array>[] = [];
    for (let i = 0; i < MAX_WATCHERS_PER_CAP - 1; i++) {
      const opened = await journal.watch("", null, rootId);
      if (!opened.ok) throw new Error(`watcher ${i}`);
      const reader = opened.value.getReader();
      await reader.read();
      readers.push(reader);
    }
    // The socket and 31 streams fill the cap's share: one more ends its oldest stream, not the socket.
    const last = await journal.watch("", null, rootId);
    expect(last.ok).toBe(true);
    const ended = new TextDecoder().decode((await readers[0]!.read()).value);
    expect(ended).toBe('event: resume\ndata: {"since":"0"}\n\n');
    expect((await readers[0]!.read()).done).toBe(true);
    await root.write("a.txt", "a");
    expect(await ws.event()).toMatchObject({ path: "a.txt" });
    ws.ws.close();
    for (const reader of readers.slice(1)) await reader.cancel();
    if (last.ok) await last.value.cancel();
  });

  it("end a cap's oldest socket past its share, to resume, and never another cap's", async () => {
    const prefix = `watch/sockets/${++counter}/`;
    const root = cap((await mintRoot(prefix)).token);
    const owner = await socket(root);
    const sockets = [];
    for (let i = 0; i < MAX_WATCHERS_PER_CAP; i++)
      sockets.push(await journalSocket(prefix, { scope: "", expiresAt: null, since: null }));
    await root.write("a.txt", "a");
    for (const s of [owner, ...sockets]) expect(await s.event()).toMatchObject({ path: "a.txt", version: "1" });
    const newer = await journalSocket(prefix, { scope: "", expiresAt: null, since: null });
    expect(await sockets[0]!.next()).toEqual({ data: { resume: { since: "1" } } });
    expect(await sockets[0]!.next()).toEqual({ closed: 1000 });
    await root.write("b.txt", "b");
    for (const s of [owner, newer, sockets[1]!]) expect(await s.event()).toMatchObject({ path: "b.txt" });
    for (const s of [owner, newer, ...sockets.slice(1)]) s.ws.close();
  });
});

describe("what a WebSocket watcher leaves in the journal", () => {
  it("is the cap's public id, scope and expiry: never its token", async () => {
    const prefix = `watch/kept/${++counter}/`;
    const root = cap((await mintRoot(prefix)).token);
    const kid = await child(root, { path: "sub", ttlSeconds: 3600 });
    const ws = await socket(kid);
    const journal = env.JOURNALS.get(env.JOURNALS.idFromName(`r2:${prefix}`));
    const kept = await runInDurableObject(journal, (_instance, state) =>
      state.getWebSockets().map((s) => ({ tags: state.getTags(s), attachment: s.deserializeAttachment() })),
    );
    expect(kept).toEqual([
      {
        tags: [`cap:${kid.minted.id}`],
        attachment: {
          scope: "sub/",
          capId: kid.minted.id,
          expiresAt: Date.parse(kid.minted.expiresAt!),
          opened: expect.any(Number),
          sent: 0,
        },
      },
    ]);
    expect(JSON.stringify(kept)).not.toContain(kid.token);
    ws.ws.close();
  });
});

describe("a WebSocket watcher's cap expiring", () => {
  it("closes the socket, and the journal never sends to a socket whose cap's time is up", async () => {
    const prefix = `watch/expiry/${++counter}/`;
    const root = cap((await mintRoot(prefix)).token);
    const brief = await child(root, { path: "" });
    const ws = await socket(brief);
    // Its expiry arrives once the socket is open: set in place with the alarm due, rather than a TTL of a
    // second that a loaded machine can spend before the socket opens (then refused, not closed).
    await setExpiry(brief.token, Date.now() - 1, { alarm: true });
    await runDurableObjectAlarm(await capObject(brief.token));
    // Closed by the cap's own expiry (its alarm): waits on the socket, not on a clock.
    expect(await ws.next()).toEqual({ closed: 1000 });
    // As after hibernation, with no cap object telling it: the attachment's expiry is checked before sending.
    const stale = await journalSocket(prefix, { scope: "", expiresAt: Date.now() - 1, since: null });
    await root.write("a.txt", "a");
    expect(await stale.next()).toEqual({ closed: 1000 });
  });
});

describe("a WebSocket watcher's connection", () => {
  it("is sent at most 128 KiB of events (a socket's unread bytes cannot be seen), then told where to resume", async () => {
    const prefix = `watch/socket-bytes/${++counter}/`;
    await mintRoot(prefix);
    const journal = env.JOURNALS.get(env.JOURNALS.idFromName(`r2:${prefix}`));
    // About 1 KiB an event, committed straight to the journal (as a cap reports a delete): 130 are more than 128 KiB.
    const long = Array.from({ length: 4 }, (_, i) => String(i).repeat(239)).join("/");
    for (let i = 0; i < 130; i++) {
      const committed = await journal.commit("r2", { op: "delete", path: `${long}${i}` }, "actor", DEFAULT_RETENTION);
      expect(committed.ok).toBe(true);
    }
    const ws = await journalSocket(prefix, { scope: "", expiresAt: null, since: 0 });
    const got: Event[] = [];
    let next = await ws.next();
    while ("data" in next && !(next.data as { resume?: unknown }).resume) {
      got.push(next.data as Event);
      next = await ws.next();
    }
    expect(got.length).toBeGreaterThan(100);
    expect(got.length).toBeLessThan(130);
    expect(next).toEqual({ data: { resume: { since: got.at(-1)!.version } } });
    expect(await ws.next()).toEqual({ closed: 1000 });
    const more = await journalSocket(prefix, { scope: "", expiresAt: null, since: Number(got.at(-1)!.version) });
    expect((await more.event()).version).toBe(String(Number(got.at(-1)!.version) + 1));
    more.ws.close();
  });
});

describe("a watcher's queue", () => {
  it("is bounded in bytes: a backlog of long paths ends early with where to resume", async () => {
    const root = cap((await mintRoot(`watch/bytes/${++counter}/`)).token);
    // About 1.2 KiB an event: 130 of them are more than a watcher may hold.
    const long = Array.from({ length: 4 }, (_, i) => String(i).repeat(239)).join("/");
    // Two paths, so no version is pruned (a path keeps 100).
    for (let i = 0; i < 130; i++) expect((await root.write(`${long}${i % 2}`, String(i))).status).toBeLessThan(300);
    const feed = await watch(root, "0");
    const seen: Event[] = [];
    let resume: unknown = null;
    while (seen.length < 130 && resume === null) {
      const next = await feed.next();
      if (next === null) break;
      if (next.event === "resume") resume = next.data;
      else seen.push(next.data as Event);
    }
    expect(seen.length).toBeLessThan(130);
    expect(resume).toEqual({ since: seen.at(-1)!.version });
    expect(await feed.next()).toBeNull();
    // Resuming there goes on with the rest.
    const rest = await watch(root, seen.at(-1)!.version);
    expect(((await rest.next())!.data as Event).version).toBe(String(Number(seen.at(-1)!.version) + 1));
    await rest.cancel();
  });
});
