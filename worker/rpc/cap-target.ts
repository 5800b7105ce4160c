import { RpcTarget } from "capnweb";
import { capObjectStub } from "../../durable-objects/object-stubs.ts";
import { parseGrantRequest } from "../../shared/grant-request.ts";
import { refuse } from "../../shared/refusals.ts";
import { ok, type Result } from "../../shared/result.ts";
import { digestToken } from "../../shared/token.ts";
import type {
  CapInfo,
  ChildPage,
  ListPage,
  MintedCap,
  MoveResult,
  RevokePending,
  Stat,
  VersionPage,
  WriteResult,
} from "../../shared/wire-types.ts";
import { readWhole } from "../../storage-adapters/whole-body.ts";
import type { CapStub } from "../cap-stub.ts";
import type { Env } from "../env.ts";
import { bytesArg, headerArg, optionsArg, pathArg, queryArg } from "./rpc-args.ts";
import { unwrap } from "./rpc-error.ts";
import { readBytes } from "./rpc-read.ts";
import type { RpcSessionBudget } from "./rpc-session-budget.ts";
import { pumpWatch, type WatchCallback, WatchHandle } from "./rpc-watch.ts";

/** What a session's targets share: the worker's bindings, the origin of minted URLs, the bounds. */
export interface RpcContext {
  env: Env;
  origin: string;
  budget: RpcSessionBudget;
}

/**
 * One cap over Cap'n Web. Every method calls the cap's object exactly as the
 * HTTP route does, so rights, the path parser, revocation, expiry and audit
 * are the object's, once; a refusal is thrown as the contract's code and text.
 *
 * The token lives in a `#` field, which capnweb never exposes or sends: a
 * client holds a stub, and only `share()` turns it into a cap URL.
 */
/** An RPC `subdir()` child's lifetime when the call names none: an hour (never past its parent's). */
export const RPC_SUBDIR_DEFAULT_TTL_SECONDS = 3600;

export class CapTarget extends RpcTarget {
  readonly #cap: CapStub;
  readonly #token: string;
  readonly #context: RpcContext;
  readonly #main: boolean;

  constructor(cap: CapStub, token: string, context: RpcContext, main: boolean) {
    super();
    this.#cap = cap;
    this.#token = token;
    this.#context = context;
    this.#main = main;
  }

  /** The cap's object, for the service binding's stream methods (worker/binding/): a static, so no stub exposes it. */
  static stubOf(target: CapTarget): CapStub {
    return target.#cap;
  }

  async read(path?: string): Promise<Uint8Array> {
    const at = pathArg(path);
    return this.#call(() => readBytes(this.#cap, this.#context.env, at, this.#context.budget));
  }

  async readText(path?: string): Promise<string> {
    return new TextDecoder().decode(await this.read(path));
  }

  async write(
    path: string,
    bytes: Uint8Array | ArrayBuffer | string,
    options?: { contentType?: string; ifMatch?: string; ifNoneMatch?: string },
  ): Promise<WriteResult> {
    const at = pathArg(path);
    const data = bytesArg(bytes);
    const o = optionsArg(options, ["contentType", "ifMatch", "ifNoneMatch"]);
    const headers = {
      length: data.byteLength,
      contentType: headerArg(o.contentType),
      ifMatch: headerArg(o.ifMatch) ?? undefined,
      ifNoneMatch: headerArg(o.ifNoneMatch) ?? undefined,
    };
    return this.#call(() => this.#cap.writeFile(at, new Response(data).body!, headers), data.byteLength);
  }

  async delete(path: string): Promise<null> {
    const at = pathArg(path);
    return this.#call(() => this.#cap.deleteFile(at));
  }

  async move(from: string, to: string, options?: { overwrite?: boolean }): Promise<MoveResult> {
    const { overwrite = false } = optionsArg(options, ["overwrite"]);
    if (typeof from !== "string" || typeof to !== "string" || typeof overwrite !== "boolean") {
      return unwrap(refuse("moveFields"));
    }
    return this.#call(async () => {
      const moved = await this.#cap.movePath(from, to, overwrite);
      return moved.ok ? ok({ from, to }) : moved;
    });
  }

  /** Makes a folder and any missing above it (needs write), as `PUT /folder` does. */
  async makeFolder(path: string): Promise<null> {
    const at = pathArg(path);
    return this.#call(() => this.#cap.makeFolder(at));
  }

  /** Removes an empty folder (needs delete), as `DELETE /folder` does. */
  async removeFolder(path: string): Promise<null> {
    const at = pathArg(path);
    return this.#call(() => this.#cap.removeFolder(at));
  }

  async stat(path?: string): Promise<Stat> {
    const at = pathArg(path);
    return this.#call(() => this.#cap.statPath(at));
  }

  async list(path?: string, options?: { cursor?: string; limit?: number; depth?: number }): Promise<ListPage> {
    const at = pathArg(path);
    const o = optionsArg(options, ["cursor", "limit", "depth"]);
    const [cursor, limit, depth] = [queryArg(o.cursor), queryArg(o.limit), queryArg(o.depth)];
    return this.#call(() => this.#cap.listDir(at, cursor, limit, depth));
  }

  /**
   * Mints a real child (durable, listed by this cap, revoked with it) and
   * answers with its target. It expires after {@link RPC_SUBDIR_DEFAULT_TTL_SECONDS}
   * unless `ttlSeconds` says otherwise (`null`: no lifetime of its own). A pipelined call on the answer runs once the
   * child exists; the child's token never leaves the worker unless shared.
   */
  async subdir(
    path?: string,
    options?: { rights?: string[]; ttlSeconds?: number | null; label?: string; history?: "all" },
  ): Promise<CapTarget> {
    const fields = { ...optionsArg(options, GRANT_FIELDS) };
    // One child per call, often one per request: without a lifetime they would pile up to the children limit.
    if (fields.ttlSeconds === undefined) fields.ttlSeconds = RPC_SUBDIR_DEFAULT_TTL_SECONDS;
    const request = unwrap(parseGrantRequest({ path: pathArg(path) ?? "", ...fields }));
    const minted = await this.#call(() => this.#cap.mintChild(request, this.#context.origin), 0, true);
    const { key } = await digestToken(minted.token);
    return new CapTarget(capObjectStub(this.#context.env, key), minted.token, this.#context, false);
  }

  async info(): Promise<CapInfo> {
    return this.#call(() => this.#cap.describe(true));
  }

  async children(options?: { cursor?: string; limit?: number }): Promise<ChildPage> {
    const o = optionsArg(options, ["cursor", "limit"]);
    const [cursor, limit] = [queryArg(o.cursor), queryArg(o.limit)];
    return this.#call(() => this.#cap.listChildren(cursor, limit));
  }

  /** Revokes this cap and everything minted from it; a WebSocket whose main cap this was then closes. */
  async revoke(): Promise<RevokePending> {
    const outcome = await this.#call(() => this.#cap.revoke());
    if (this.#main) this.#context.budget.mainDied();
    return { revoked: true, pendingDescendants: outcome.pending };
  }

  /** A file's versions, newest first, as `GET /versions` lists them (needs read). */
  async versions(path: string, options?: { cursor?: string; limit?: number }): Promise<VersionPage> {
    const at = pathArg(path);
    const o = optionsArg(options, ["cursor", "limit"]);
    const [cursor, limit] = [queryArg(o.cursor), queryArg(o.limit)];
    return this.#call(() => this.#cap.listVersions(at, cursor, limit));
  }

  /** One version's bytes (needs read), within the session's read bounds. */
  async readVersion(id: string): Promise<Uint8Array> {
    return this.#call(async () => {
      const found = await this.#cap.readVersion(idArg(id));
      if (!found.ok) return found;
      const spent = this.#context.budget.spendRead(found.value.size);
      if (!spent.ok) {
        await found.value.body.cancel().catch(() => undefined);
        return spent;
      }
      const bytes = await readWhole(found.value.body, found.value.size);
      return bytes ? ok(bytes) : refuse("keptChanging");
    });
  }

  /** Writes a version back to its path as a new version (needs read and write). */
  async restore(id: string): Promise<WriteResult> {
    return this.#call(() => this.#cap.restoreVersion(idArg(id)));
  }

  /** Destroys a version's bytes for good, keeping its record (needs delete). */
  async redact(id: string): Promise<null> {
    return this.#call(() => this.#cap.redactVersion(idArg(id)));
  }

  /**
   * Calls `callback` with each change inside this cap's subtree (the feed of
   * `GET /watch`, from `since` if given), then once with `{ type: "end" }`.
   * WebSocket sessions only; the feed stops when the cap is revoked, when the
   * handle's `stop()` is called, or when the session ends.
   */
  async watch(callback: WatchCallback, options?: { since?: string }): Promise<WatchHandle> {
    if (typeof (callback as { dup?: unknown } | null)?.dup !== "function") return unwrap(refuse("rpcNotACall"));
    const { since } = optionsArg(options, ["since"]);
    const slot = unwrap(this.#context.budget.startWatch());
    try {
      const feed = await this.#call(() => this.#cap.watch(queryArg(since)));
      const stopped = new AbortController();
      const stop = () => stopped.abort();
      slot.signal.addEventListener("abort", stop, { once: true });
      // Kept past this call: capnweb disposes a parameter's stub when the call returns.
      void pumpWatch(feed, callback.dup(), stopped.signal).finally(() => {
        slot.signal.removeEventListener("abort", stop);
        slot.release();
      });
      return new WatchHandle(stop);
    } catch (error) {
      slot.release();
      throw error;
    }
  }

  /** The cap as a durable URL: the one way a stub becomes a secret the client can keep. */
  async share(): Promise<MintedCap> {
    const info = await this.info();
    const url = `${this.#context.origin}/object/${this.#token}`;
    return { token: this.#token, url, id: info.id, rights: info.rights, expiresAt: info.expiresAt };
  }

  /** Runs a call on the cap within the session's bounds; a dead main cap ends a WebSocket session. */
  async #call<T>(call: () => Promise<Result<T>>, bytes = 0, mint = false): Promise<T> {
    const result = await this.#context.budget.run(call, bytes, mint);
    if (!result.ok && result.error.code === "no_such_cap" && this.#main) this.#context.budget.mainDied();
    return unwrap(result);
  }
}

/** A version id as the routes take it: the object judges it (a non-string is no id at all). */
function idArg(id: unknown): string {
  return typeof id === "string" ? id : "";
}

const GRANT_FIELDS = ["rights", "ttlSeconds", "label", "maxBytes", "maxFiles", "history"] as const;
