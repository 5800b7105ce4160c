/**
 * Live resource updates over MCP, from the vault's watch feed, in both eras,
 * through the official clients: `subscriptions/listen` (SDK v2, 2026-07-28)
 * and `resources/subscribe` with the session's GET stream (SDK 1.32,
 * 2025-era). The writer and the subscriber hold different caps over one
 * subtree; nothing outside the subscriber's subtree is announced; revoking
 * the subscriber's cap ends its stream; the bounds refuse with typed errors.
 */
import {
  Client as ClientV2,
  ProtocolError,
  StreamableHTTPClientTransport as StreamableHTTPClientTransportV2,
} from "@modelcontextprotocol/client";
import {
  McpError,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FsCap } from "../../clients/typescript/fs-cap.ts";
import { MAX_MCP_SUBSCRIPTIONS } from "../../durable-objects/cap-mcp-sessions.ts";
import { MAX_MCP_STREAMS } from "../../worker/mcp/mcp-change-stream.ts";
import { mcpClients, postMcp } from "./mcp-client.ts";
import { sharedVault } from "./shared-vault.ts";

/** The root of this file's prefix; `team` below it is the subscribers' subtree, `elsewhere` is outside it. */
let root: FsCap;
let team: FsCap;
let docs: FsCap;
const { connect, keep, closeAll } = mcpClients();

/** Long enough for any loaded machine; an event arrives in milliseconds. */
const DEADLINE_MS = 20_000;

beforeAll(async () => {
  root = new FsCap((await sharedVault("mcp-subscriptions")).rootCapUrl);
  await root.write("team/docs/seed.md", "seed");
  team = await root.subdir({ path: "team" });
  docs = await team.subdir({ path: "docs" });
});

afterAll(async () => {
  await closeAll();
});

/** Notifications in the order they came, and the next one to arrive. */
function inbox<T>() {
  const items: T[] = [];
  const waiting: ((item: T) => void)[] = [];
  return {
    items,
    push(item: T) {
      items.push(item);
      waiting.shift()?.(item);
    },
    /** The first item, waiting for it up to the deadline. */
    first(): Promise<T> {
      if (items.length > 0) return Promise.resolve(items[0]!);
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error("no notification arrived")), DEADLINE_MS);
        waiting.push((item) => {
          clearTimeout(timer);
          resolve(item);
        });
      });
    },
  };
}

async function connectModern(capUrl: string): Promise<ClientV2> {
  const client = new ClientV2(
    { name: "capvault-test", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await client.connect(new StreamableHTTPClientTransportV2(new URL(`${capUrl}/mcp`)));
  return keep(client);
}

/** What a listen with `uris` sees, in order, as `updated <uri>` and `list_changed`. */
async function listenOn(capUrl: string, uris: string[]) {
  const client = await connectModern(capUrl);
  const seen = inbox<string>();
  client.setNotificationHandler("notifications/resources/updated", (n) => seen.push(`updated ${n.params.uri}`));
  client.setNotificationHandler("notifications/resources/list_changed", () => seen.push("list_changed"));
  const subscription = await client.listen({ resourceSubscriptions: uris, resourcesListChanged: true });
  return { client, seen, subscription };
}

const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "1" } },
};

/** A 2025-era session of `capUrl`, by raw POST: its id, from initialize's answer. */
async function rawSession(capUrl: string): Promise<string> {
  const response = await postMcp(capUrl, initialize, {});
  expect(response.status).toBe(200);
  await response.body?.cancel();
  const session = response.headers.get("mcp-session-id");
  expect(session).toMatch(/^[0-9a-f-]{36}$/);
  return session!;
}

/** A GET stream of a 2025-era session, by raw fetch. */
function rawStream(capUrl: string, session: string, signal?: AbortSignal): Promise<Response> {
  return fetch(`${capUrl}/mcp`, {
    headers: { accept: "text/event-stream", "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" },
    ...(signal ? { signal } : {}),
  });
}

describe("2026-07-28: subscriptions/listen", () => {
  it("announces a write through a child cap to a listener on its parent, and nothing from outside the subtree first", async () => {
    const { seen, subscription } = await listenOn(team.url, ["file:///docs/a.md"]);
    expect(subscription.honoredFilter).toEqual({
      resourceSubscriptions: ["file:///docs/a.md"],
      resourcesListChanged: true,
    });
    // Outside the listener's subtree first: were it announced, its list_changed would come first.
    await root.write("elsewhere/a.md", "outside");
    await docs.write("a.md", "inside");
    expect(await seen.first()).toBe("updated file:///docs/a.md");
    await subscription.close();
  });

  it("ends the listen with its complete result when the listener's cap is revoked", async () => {
    const listener = await team.subdir({ path: "" });
    const { subscription } = await listenOn(listener.url, ["file:///docs/a.md"]);
    await listener.revoke();
    expect(await subscription.closed).toBe("graceful");
  });

  it("refuses a URI of no file under the cap, and too many, with typed errors before any acknowledgement", async () => {
    const client = await connectModern(docs.url);
    for (const uri of ["file:///..%2F..%2Felsewhere%2Fa.md", "https://example.com/a.md", "file://host/a.md"]) {
      const refused = await client.listen({ resourceSubscriptions: [uri] }).catch((e: unknown) => e);
      expect(refused, uri).toBeInstanceOf(ProtocolError);
      expect((refused as ProtocolError).code).toBe(-32602);
      expect((refused as ProtocolError).message).toMatch(/bad_request: subscriptions take file: or skill: URIs/);
    }
    const many = Array.from({ length: MAX_MCP_SUBSCRIPTIONS + 1 }, (_, i) => `file:///f${i}.md`);
    const refused = await client.listen({ resourceSubscriptions: many }).catch((e: unknown) => e);
    expect((refused as ProtocolError).message).toMatch(/^too_large: a session or listen stream holds at most 64/);
  });

  it("declares subscribe and listChanged for a cap with read only", async () => {
    expect((await connectModern(team.url)).getServerCapabilities()?.resources).toEqual({
      subscribe: true,
      listChanged: true,
    });
    const writeOnly = await team.subdir({ path: "", rights: ["write"] });
    expect((await connectModern(writeOnly.url)).getServerCapabilities()?.resources).toBeUndefined();
  });
});

describe("2025-era: resources/subscribe and the session's GET stream", () => {
  it("announces a write through a child cap to a subscriber on its parent, and nothing from outside the subtree first", async () => {
    const client = await connect(team.url);
    expect(client.getServerCapabilities()?.resources).toEqual({ subscribe: true, listChanged: true });
    const seen = inbox<string>();
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => seen.push(`updated ${n.params.uri}`));
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => seen.push("list_changed"));
    await client.subscribeResource({ uri: "file:///docs/b.md" });
    // The client opens its GET stream on its own after initialize: write until one arrives, outside first each time.
    const first = seen.first();
    for (let round = 0; seen.items.length === 0; round++) {
      await root.write(`elsewhere/b-${round}.md`, "outside");
      await docs.write("b.md", `inside ${round}`);
      await Promise.race([first, new Promise((resolve) => setTimeout(resolve, 200))]);
    }
    expect(await first).toBe("updated file:///docs/b.md");
    // Unsubscribed, the file's changes are no longer announced (a later file's creation still is).
    await client.unsubscribeResource({ uri: "file:///docs/b.md" });
    const before = seen.items.length;
    await docs.write("b.md", "after unsubscribe");
    await docs.write("c.md", "new file");
    await waitUntil(() => seen.items.slice(before).includes("list_changed"));
    expect(seen.items.slice(before)).not.toContain("updated file:///docs/b.md");
  });

  it("refuses a URI of no file under the cap, and a subscribe without a session, with typed errors", async () => {
    const client = await connect(docs.url);
    for (const uri of ["file:///..%2F..%2Felsewhere%2Fa.md", "https://example.com/a.md"]) {
      const refused = await client.subscribeResource({ uri }).catch((e: unknown) => e);
      expect(refused, uri).toBeInstanceOf(McpError);
      expect((refused as McpError).code).toBe(-32602);
      expect((refused as McpError).message).toMatch(/bad_request: subscriptions take file: or skill: URIs/);
    }
    const bare = await postMcp(docs.url, {
      jsonrpc: "2.0",
      id: 2,
      method: "resources/subscribe",
      params: { uri: "file:///a.md" },
    });
    expect(((await bare.json()) as { error: { message: string } }).error.message).toMatch(
      /bad_request: resources\/subscribe needs the Mcp-Session-Id/,
    );
  });

  it("ends the GET stream when the subscriber's cap is revoked; the cap then answers no_such_cap", async () => {
    const subscriber = await team.subdir({ path: "" });
    const session = await rawSession(subscriber.url);
    const stream = await rawStream(subscriber.url, session);
    expect(stream.status).toBe(200);
    expect(stream.headers.get("content-type")).toBe("text/event-stream");
    await subscriber.revoke();
    const reader = stream.body!.getReader();
    while (!(await reader.read()).done) {}
    expect((await rawStream(subscriber.url, session)).status).toBe(404);
  });

  it("declares no subscriptions and gives no session to a cap without read", async () => {
    const writeOnly = await team.subdir({ path: "", rights: ["write"] });
    const response = await postMcp(writeOnly.url, initialize, {});
    expect(response.headers.get("mcp-session-id")).toBeNull();
    const { result } = (await response.json()) as { result: { capabilities: Record<string, unknown> } };
    expect(result.capabilities.resources).toBeUndefined();
  });
});

describe("bounds", () => {
  it(`holds at most ${MAX_MCP_STREAMS} change streams per cap, both eras together, and frees a closed one`, async () => {
    const capped = await team.subdir({ path: "" });
    const session = await rawSession(capped.url);
    const client = await connectModern(capped.url);
    const aborts: AbortController[] = [];
    for (let i = 0; i < MAX_MCP_STREAMS / 2; i++) {
      const abort = new AbortController();
      aborts.push(abort);
      expect(
        (await rawStream(capped.url, `${session.slice(0, -2)}${String(i).padStart(2, "0")}`, abort.signal)).status,
      ).toBe(200);
    }
    const listens = [];
    for (let i = 0; i < MAX_MCP_STREAMS / 2; i++) listens.push(await client.listen({ resourcesListChanged: true }));
    const refused = await rawStream(capped.url, session);
    expect(refused.status).toBe(413);
    expect(await refused.json()).toEqual({
      error: {
        code: "too_large",
        message: `a capability holds at most ${MAX_MCP_STREAMS} open MCP change streams here at once; close one before opening another`,
      },
    });
    const listenRefused = await client.listen({ resourcesListChanged: true }).catch((e: unknown) => e);
    expect((listenRefused as ProtocolError).code).toBe(-32603);
    expect((listenRefused as ProtocolError).message).toMatch(/^too_large: a capability holds at most/);
    // A client that goes away gives its place back, once a keepalive finds its connection closed (5 s).
    aborts[0]!.abort();
    await listens[0]!.close();
    await waitUntil(async () => {
      const again = await rawStream(capped.url, session);
      await again.body?.cancel();
      return again.status === 200;
    }, 2 * DEADLINE_MS);
    for (const abort of aborts) abort.abort();
    for (const listen of listens) await listen.close();
  });
});

/** Polls `done` until it holds, failing past the deadline. */
async function waitUntil(done: () => boolean | Promise<boolean>, deadline = DEADLINE_MS): Promise<void> {
  const until = Date.now() + deadline;
  while (!(await done())) {
    if (Date.now() > until) throw new Error("the condition never held");
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
