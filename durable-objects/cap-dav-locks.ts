import { refuse } from "../shared/refusals.ts";
import { ok, type Result } from "../shared/result.ts";
import type { CapAuthorize } from "./cap-authorize.ts";
import type { CapHost } from "./cap-host.ts";

/** A cap's WebDAV locks are bounded in number and life: a lock flood costs the vault at most this much. */
export const MAX_DAV_LOCKS = 64;
export const MAX_LOCK_SECONDS = 3600;
export const MAX_LOCK_OWNER_BYTES = 1024;
const KEY = "davLocks";

/** One WebDAV lock (RFC 4918 §6), kept in the cap's own object; `path` is the cap-relative path ("" the root). */
export interface DavLock {
  token: string;
  path: string;
  depth: "0" | "infinity";
  scope: "exclusive" | "shared";
  /** The client's `<owner>` element, re-serialized (worker/dav/dav-xml.ts), or "". */
  owner: string;
  seconds: number;
  expiresAt: number;
}

export interface LockRequest {
  depth: "0" | "infinity";
  scope: "exclusive" | "shared";
  owner: string;
  seconds: number;
}

/** True when `lock` applies to `path`: the path itself, or below it for a depth-infinity lock. */
export function lockCovers(lock: Pick<DavLock, "path" | "depth">, path: string): boolean {
  return lock.path === path || (lock.depth === "infinity" && (lock.path === "" || path.startsWith(`${lock.path}/`)));
}

/** True when `path` is `under` or below it. */
export function pathWithin(path: string, under: string): boolean {
  return under === "" || path === under || path.startsWith(`${under}/`);
}

/**
 * WebDAV locks of one cap (class 2, which Finder and Windows need to write).
 * They live in the cap's object, so they end with it, and bind WebDAV
 * requests only: the HTTP API, MCP and RPC write through them (a lock is a
 * courtesy between WebDAV clients, not authority). Taking, refreshing or
 * releasing a lock needs the write right; each passes the chokepoint.
 */
export class CapDavLocks {
  constructor(
    private readonly host: CapHost,
    private readonly gate: CapAuthorize,
  ) {}

  private async current(now: number): Promise<DavLock[]> {
    const all = (await this.host.storage.get<DavLock[]>(KEY)) ?? [];
    return all.filter((l) => l.expiresAt > now);
  }

  private async checked(rawPath: string | null, write: boolean): Promise<Result<string>> {
    const access = await this.gate.authorize({ rights: write ? ["write"] : [] }, { kind: "entry", raw: [rawPath] });
    return access.ok ? ok(access.value.paths[0].path.text) : access;
  }

  async lock(rawPath: string | null, request: LockRequest, now: number): Promise<Result<DavLock>> {
    const at = await this.checked(rawPath, true);
    if (!at.ok) return at;
    if (new TextEncoder().encode(request.owner).byteLength > MAX_LOCK_OWNER_BYTES)
      return refuse("davLockOwner", { limit: MAX_LOCK_OWNER_BYTES });
    const locks = await this.current(now);
    const path = at.value;
    const clash = locks.some(
      (l) =>
        (lockCovers(l, path) || (request.depth === "infinity" && pathWithin(l.path, path))) &&
        (l.scope === "exclusive" || request.scope === "exclusive"),
    );
    if (clash) return refuse("davLocked");
    if (locks.length >= MAX_DAV_LOCKS) return refuse("davTooManyLocks", { limit: MAX_DAV_LOCKS });
    const seconds = Math.min(Math.max(1, Math.floor(request.seconds)), MAX_LOCK_SECONDS);
    const lock: DavLock = {
      token: `opaquelocktoken:${crypto.randomUUID()}`,
      path,
      depth: request.depth,
      scope: request.scope,
      owner: request.owner,
      seconds,
      expiresAt: now + seconds * 1000,
    };
    await this.host.storage.put(KEY, [...locks, lock]);
    return ok(lock);
  }

  /** Extends the lock `token` applying to the path (a LOCK with no body, RFC 4918 §9.10.2). */
  async refresh(rawPath: string | null, token: string, seconds: number, now: number): Promise<Result<DavLock>> {
    const at = await this.checked(rawPath, true);
    if (!at.ok) return at;
    const locks = await this.current(now);
    const lock = locks.find((l) => l.token === token && lockCovers(l, at.value));
    if (!lock) return refuse("davNoSuchLock");
    lock.seconds = Math.min(Math.max(1, Math.floor(seconds)), MAX_LOCK_SECONDS);
    lock.expiresAt = now + lock.seconds * 1000;
    await this.host.storage.put(KEY, locks);
    return ok(lock);
  }

  async unlock(rawPath: string | null, token: string, now: number): Promise<Result<null>> {
    const at = await this.checked(rawPath, true);
    if (!at.ok) return at;
    const locks = await this.current(now);
    const kept = locks.filter((l) => !(l.token === token && lockCovers(l, at.value)));
    if (kept.length === locks.length) return refuse("davNoSuchLock");
    await this.host.storage.put(KEY, kept);
    return ok(null);
  }

  /** The live locks of this cap (at most {@link MAX_DAV_LOCKS}), for the worker to judge a request against. */
  async active(now: number): Promise<Result<DavLock[]>> {
    const live = await this.gate.authorize({ rights: [] });
    return live.ok ? ok(await this.current(now)) : live;
  }

  /** Drops the locks at or below a path that is gone (deleted, moved away): RFC 4918 §9.6.1, §9.9.2. */
  async drop(rawPath: string | null, now: number): Promise<Result<null>> {
    const at = await this.checked(rawPath, false);
    if (!at.ok) return at;
    const locks = await this.current(now);
    const kept = locks.filter((l) => !pathWithin(l.path, at.value));
    if (kept.length !== locks.length) await this.host.storage.put(KEY, kept);
    return ok(null);
  }
}
