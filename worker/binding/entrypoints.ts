import { WorkerEntrypoint } from "cloudflare:workers";
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
import type { Env } from "../env.ts";
import type { WatchCallback, WatchHandle } from "../rpc/rpc-watch.ts";
import { type BindingCap, openCap } from "./binding-cap.ts";

/**
 * The vault to another Worker over a service binding (docs/workers.md):
 * `services = [{ binding = "VAULT", service = "capvault", entrypoint = "CapVault" }]`,
 * then `env.VAULT.open(token)` is the cap's stub. The binding itself grants
 * nothing: every call is the token's, as a cap URL's request is.
 */
export class CapVault extends WorkerEntrypoint<Env> {
  /**
   * The cap `token` names, as a stub. Calls on the answer pipeline:
   * `open(t).subdir("notes").readText("a.md")` is one round trip. A forged,
   * unknown, revoked, expired or holder-bound token gives a stub whose every
   * call is refused alike (`no_such_cap: …`).
   */
  open(token: string): Promise<BindingCap> {
    return openCap(this.env, token);
  }
}

/** What a {@link CapBinding}'s binding carries: the one cap it grants, fixed at deploy time. */
export interface CapBindingProps {
  token?: unknown;
}

/**
 * One cap as a binding of its own, fixed by the binding's `props`:
 * `services = [{ binding = "NOTES", service = "capvault", entrypoint = "CapBinding", props = { token = "…" } }]`.
 * The consumer's code calls `env.NOTES.readText("a.md")` and never sees a
 * token; its deploy config holds the only copy (keep it as a secret is kept).
 * Each call opens the cap afresh, so a revocation holds from the next call.
 */
export class CapBinding extends WorkerEntrypoint<Env, CapBindingProps> {
  #cap(): Promise<BindingCap> {
    return openCap(this.env, this.ctx.props?.token);
  }

  async read(path?: string): Promise<Uint8Array> {
    return (await this.#cap()).read(path);
  }
  async readText(path?: string): Promise<string> {
    return (await this.#cap()).readText(path);
  }
  async readStream(path?: string): Promise<ReadableStream<Uint8Array>> {
    return (await this.#cap()).readStream(path);
  }
  async write(
    path: string,
    data: Uint8Array | ArrayBuffer | string | ReadableStream<Uint8Array>,
    options?: { contentType?: string; ifMatch?: string; ifNoneMatch?: string; length?: number },
  ): Promise<WriteResult> {
    return (await this.#cap()).write(path, data, options);
  }
  async delete(path: string): Promise<null> {
    return (await this.#cap()).delete(path);
  }
  async move(from: string, to: string, options?: { overwrite?: boolean }): Promise<MoveResult> {
    return (await this.#cap()).move(from, to, options);
  }
  async makeFolder(path: string): Promise<null> {
    return (await this.#cap()).makeFolder(path);
  }
  async removeFolder(path: string): Promise<null> {
    return (await this.#cap()).removeFolder(path);
  }
  async stat(path?: string): Promise<Stat> {
    return (await this.#cap()).stat(path);
  }
  async list(path?: string, options?: { cursor?: string; limit?: number; depth?: number }): Promise<ListPage> {
    return (await this.#cap()).list(path, options);
  }
  async subdir(
    path?: string,
    options?: { rights?: string[]; ttlSeconds?: number | null; label?: string; history?: "all" },
  ): Promise<BindingCap> {
    return (await this.#cap()).subdir(path, options);
  }
  async info(): Promise<CapInfo> {
    return (await this.#cap()).info();
  }
  async children(options?: { cursor?: string; limit?: number }): Promise<ChildPage> {
    return (await this.#cap()).children(options);
  }
  async revoke(): Promise<RevokePending> {
    return (await this.#cap()).revoke();
  }
  async share(): Promise<MintedCap> {
    return (await this.#cap()).share();
  }
  async versions(path: string, options?: { cursor?: string; limit?: number }): Promise<VersionPage> {
    return (await this.#cap()).versions(path, options);
  }
  async readVersion(id: string): Promise<Uint8Array> {
    return (await this.#cap()).readVersion(id);
  }
  async restore(id: string): Promise<WriteResult> {
    return (await this.#cap()).restore(id);
  }
  async redact(id: string): Promise<null> {
    return (await this.#cap()).redact(id);
  }
  async watch(callback: WatchCallback, options?: { since?: string }): Promise<WatchHandle> {
    return (await this.#cap()).watch(callback, options);
  }
}
