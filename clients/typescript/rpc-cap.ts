import { newWebSocketRpcSession, RpcSession } from "capnweb";
import type { Right } from "../../shared/rights.ts";
import type {
  CapInfo,
  ChildPage,
  ListPage,
  MintedCap,
  MoveResult,
  RevokePending,
  RpcWatchMessage,
  Stat,
  VersionPage,
  WriteResult,
} from "../../shared/wire-types.ts";
import { parseCapUrl } from "./cap-url.ts";
import { RpcBatchTransport } from "./rpc-batch-transport.ts";
import type { ClientOptions } from "./types.ts";
import { VaultTransport } from "./vault-transport.ts";

/**
 * A cap over Cap'n Web RPC (`/object/<token>/rpc`). Calls return promises
 * that are also stubs: `vault.subdir("skills").readText("a.md")` is one round
 * trip. A refusal rejects with an Error whose `code` is the contract's code
 * (`path_escapes`, `no_such_cap`, …) and whose `message` is its text.
 *
 * Declared here, not taken from capnweb's types, so the SDK's declarations
 * name no package (nor `Symbol.dispose`, which a consumer's TypeScript may
 * lack: {@link disconnect} disposes a stub).
 */
export interface RpcCap {
  read(path: string): Promise<Uint8Array>;
  readText(path: string): Promise<string>;
  write(path: string, bytes: Uint8Array | ArrayBuffer | string, options?: RpcWriteOptions): Promise<WriteResult>;
  delete(path: string): Promise<null>;
  move(from: string, to: string, options?: { overwrite?: boolean }): Promise<MoveResult>;
  /** A folder and any missing above it (needs write), as `PUT /folder`. */
  makeFolder(path: string): Promise<null>;
  /** An empty folder removed (needs delete), as `DELETE /folder`. */
  removeFolder(path: string): Promise<null>;
  stat(path?: string): Promise<Stat>;
  /** One page; pass `cursor` back for the next. */
  list(path?: string, options?: { cursor?: string; limit?: number; depth?: number }): Promise<ListPage>;
  /** Mints a real child cap (durable, revoked with this one) and answers with its stub, usable at once. */
  subdir(path?: string, options?: RpcSubdirOptions): RpcCapPromise;
  info(): Promise<CapInfo>;
  children(options?: { cursor?: string; limit?: number }): Promise<ChildPage>;
  revoke(): Promise<RevokePending>;
  /** The cap's URL: the one call that hands the client a secret. */
  share(): Promise<MintedCap>;
  /** A file's versions, newest first (as `GET /versions`). */
  versions(path: string, options?: { cursor?: string; limit?: number }): Promise<VersionPage>;
  readVersion(id: string): Promise<Uint8Array>;
  /** Writes a version back to its path as a new version (needs read and write). */
  restore(id: string): Promise<WriteResult>;
  /** Destroys a version's bytes, keeping its record. */
  redact(id: string): Promise<null>;
  /**
   * Calls `callback` with each change inside this cap's subtree, then once
   * with `{ type: "end", since }` (resume from `since`). WebSocket sessions
   * (connectLive) only; `stop()` on the answer ends it.
   */
  watch(
    callback: (message: RpcWatchMessage) => unknown,
    options?: { since?: string },
  ): Promise<{ stop(): Promise<null> }>;
}

/** A cap still being minted: call its methods now, or await it for the stub. */
export type RpcCapPromise = RpcCap & Promise<RpcCap>;

export interface RpcWriteOptions {
  contentType?: string;
  /** As the HTTP `If-Match`: an etag, `"sha256:<hex>"`, or `*`. */
  ifMatch?: string;
  /** As the HTTP `If-None-Match`: `*` writes only a new file. */
  ifNoneMatch?: string;
}

export interface RpcSubdirOptions {
  rights?: Right[];
  /** Default 3600: an RPC child expires after an hour (never past this cap). `null`: no lifetime of its own. */
  ttlSeconds?: number | null;
  label?: string;
  /** As `POST /subdir`: never looser than this cap's quota. */
  maxBytes?: number;
  maxFiles?: number;
  /** As `POST /subdir`: `"all"` lets the child see this cap's history, not only what follows its mint. */
  history?: "all";
}

/** The RPC endpoint of a cap URL; `ws:`/`wss:` for a WebSocket. */
function rpcUrl(capUrl: string, live: boolean): string {
  const { mount, token } = parseCapUrl(capUrl);
  const url = `${mount}/object/${token}/rpc`;
  return live ? url.replace(/^http/, "ws") : url;
}

/**
 * One HTTP batch: make every call you need (pipelining results into later
 * calls), then await them together; the batch goes out on the next tick, as
 * one request. The stubs end with the batch. A batch refused whole (a dead
 * cap, a batch too big) rejects every call with a `CapError`.
 *
 * @example
 * const vault = connect(process.env.CAPVAULT_CAP!);
 * const text = await vault.subdir("skills").readText("hermes-fs-as-cap/SKILL.md");
 */
export function connect(capUrl: string, options: ClientOptions = {}): RpcCap {
  const { token } = parseCapUrl(capUrl);
  const transport = new RpcBatchTransport(new VaultTransport(options.fetch, [token]), rpcUrl(capUrl, false));
  return new RpcSession(transport).getRemoteMain() as unknown as RpcCap;
}

/**
 * A WebSocket session: stubs live until disposed or until their cap is
 * revoked, when their next call fails `no_such_cap` (and the session closes
 * if it was the main cap). Dispose the main stub to close it.
 *
 * @example
 * const vault = connectLive(process.env.CAPVAULT_CAP!);
 * const notes = vault.subdir("notes", { rights: ["read", "list"] });
 * console.log(await notes.list(), await notes.readText("today.md"));
 * disconnect(vault);
 * // Node 20: connectLive(url, { WebSocket }) with `import { WebSocket } from "undici"`.
 */
export function connectLive(capUrl: string, options: ConnectLiveOptions = {}): RpcCap {
  const url = rpcUrl(capUrl, true);
  // capnweb reads the global (its readyState constants too), so a class given here fills a missing global.
  if (options.WebSocket && typeof globalThis.WebSocket === "undefined")
    globalThis.WebSocket = options.WebSocket as never;
  if (typeof globalThis.WebSocket === "undefined") {
    // Node 20 has no global WebSocket; the bare ReferenceError did not say what to do.
    throw new TypeError(
      "connectLive needs a WebSocket: this runtime has none (Node 20); use Node 22 or later, or pass one: " +
        'connectLive(url, { WebSocket }) with `import { WebSocket } from "undici"` (or "ws"), or use connect() over HTTP',
    );
  }
  return newWebSocketRpcSession(url) as unknown as RpcCap;
}

export interface ConnectLiveOptions {
  /** A WebSocket class where the runtime has no global one (Node 20): undici's. Installed as the global, which capnweb reads. */
  WebSocket?: new (
    url: string,
  ) => WebSocket;
}

/** Disposes a stub: on a WebSocket session's main stub, closes the session; on another, releases it. */
export function disconnect(cap: RpcCap): void {
  const dispose = (Symbol as unknown as { dispose: symbol }).dispose;
  (cap as unknown as Record<symbol, () => void>)[dispose]?.();
}
