/**
 * The disk host: the Node side of the disk backend, plugged into the worker
 * as the Miniflare service binding `DISK` (the worker side is
 * storage-adapters/disk-storage.ts; the wire format storage-adapters/disk-protocol.ts).
 *
 * Public API (import from here):
 *   createDiskHost({ baseDir, secret, fileMode?, dirMode? }): DiskHost   (synchronous; throws if unusable)
 *   DiskHost.fetch(request): Promise<Response>   the DISK binding; never throws, never names a host path
 *   DiskHost.serve(request): Promise<HostAnswer> the same answer unbuilt, for the socket (socket-server.ts)
 *   DiskHost.cleanStaleTemps(): Promise<void>     run once at start, before serving
 *   DiskHost.close(): Promise<void>               waits for calls in progress, then releases the held
 *                                                 folders; later calls answer "unavailable"
 *
 * It serves one base folder and nothing outside it. Every name is resolved
 * beneath a directory it holds open, one component at a time, links followed
 * only while they stay within the cap's root (beneath.ts); writes are atomic
 * (atomic-write.ts); content types and etags live in sidecars under the
 * reserved `<base>/.capvault-meta/` (meta-store.ts). Linux only: it relies on
 * /proc/self/fd to emulate openat().
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { constants, existsSync, mkdirSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { refuse } from "../shared/refusals.ts";
import { DISK_SECRET_HEADER } from "../storage-adapters/disk-protocol.ts";
import { TREE_WALK_BUDGET } from "../storage-adapters/tree-page.ts";
import { type UploadLimits, UploadSlots } from "../storage-adapters/upload-limits.ts";
import { inDir, OPEN_NOFOLLOW } from "./beneath.ts";
import { checkDiskFormat } from "./format-stamp.ts";
import { errnoOf } from "./fs-errors.ts";
import type { HostContext, WalkBudget } from "./host-context.ts";
import { dropBody, type HostAnswer, type HostRequest, jsonAnswer, toResponse } from "./host-request.ts";
import { KeyedLock } from "./keyed-lock.ts";
import { META_DIR_NAME, MetaStore } from "./meta-store.ts";
import { serveCall } from "./serve-call.ts";
import { cleanStaleTemps } from "./stale-temps.ts";
import { mkdir, open } from "./sync-fs.ts";
import { FOLDER_BUDGET } from "./tree-walk.ts";
import { DISK_HOST_UPLOAD_LIMITS } from "./upload-bounds.ts";
import { openVersionsDir } from "./version-store.ts";

export interface DiskHostOptions {
  /** The base folder (`CAPVAULT_DISK_ROOT`); created (mode `dirMode`) if missing. */
  baseDir: string;
  /** Mode of files the vault creates; default 0o600. A replaced file keeps its own mode. */
  fileMode?: number;
  /** Mode of folders the vault creates; default 0o700. */
  dirMode?: number;
  /**
   * Every call must carry this in the `capvault-disk-secret` header. The
   * binding is reached over an unauthenticated local HTTP server, so without
   * it any local process could read and write the folder with no cap at all.
   */
  secret: string;
  /** Bounds on writes; each field defaults to {@link DISK_HOST_UPLOAD_LIMITS}. */
  uploads?: Partial<UploadLimits>;
  /**
   * Tests of the listing bounds only: smaller walk budgets. Only lowered: a
   * value that is not an integer from 1 to the vault's own (shared with R2)
   * leaves the vault's.
   */
  walkBudget?: Partial<WalkBudget>;
}

export interface DiskHost {
  /** The `DISK` service binding. Answers every call with 200 and a protocol body. */
  fetch(request: HostRequest): Promise<Response>;
  /** The same answer before a Response is built: what the socket writes (socket-server.ts). */
  serve(request: HostRequest): Promise<HostAnswer>;
  /** Removes temp files and sidecars a crash left behind. Call at start, before serving. */
  cleanStaleTemps(): Promise<void>;
  /** Waits for calls in progress, then releases the held folders; later calls answer "unavailable". */
  close(): Promise<void>;
}

/**
 * @example
 * const disk = createDiskHost({ baseDir: settings.diskRoot, secret });
 * await disk.cleanStaleTemps();
 * new Miniflare({ ..., serviceBindings: { DISK: (request) => disk.fetch(request) } });
 */
export function createDiskHost(options: DiskHostOptions): DiskHost {
  if (options.secret.length < 16) throw new Error("the disk host needs a secret of at least 16 characters");
  const expected = createHash("sha256").update(options.secret).digest();
  const secretMatches = (presented: string | null): boolean =>
    presented !== null && timingSafeEqual(createHash("sha256").update(presented).digest(), expected);
  const fileMode = options.fileMode ?? 0o600;
  const dirMode = options.dirMode ?? 0o700;
  const baseDir = resolve(options.baseDir);
  // Fail at start, loudly, rather than answer every request "unavailable".
  if (process.platform !== "linux" || !existsSync("/proc/self/fd")) {
    throw new Error("the disk backend needs Linux with /proc mounted (it opens files through /proc/self/fd)");
  }
  mkdirSync(baseDir, { recursive: true, mode: dirMode });
  if (!statSync(baseDir).isDirectory()) throw new Error("the disk root (CAPVAULT_DISK_ROOT) is not a folder");

  // Before anything in the folder is read or swept: state of a newer format is never touched (format-stamp.ts).
  const format = checkDiskFormat(baseDir);
  const ready = !format.ok
    ? Promise.reject(new Error("state format"))
    : openContext(
        baseDir,
        fileMode,
        dirMode,
        { ...DISK_HOST_UPLOAD_LIMITS, ...options.uploads },
        {
          files: smallerBound(options.walkBudget?.files, TREE_WALK_BUDGET),
          folders: smallerBound(options.walkBudget?.folders, FOLDER_BUDGET),
        },
      );
  ready.catch(() => undefined); // surfaced by cleanStaleTemps and as "unavailable"
  // Paths name held folders by descriptor number (/proc/self/fd/N), so the
  // base and meta descriptors may only close once no call is using them;
  // a reused number would otherwise name some other folder.
  let running = 0;
  let closing = false;
  let idle: (() => void) | null = null;
  const serve = async (request: HostRequest): Promise<HostAnswer> => {
    if (!secretMatches(request.headers.get(DISK_SECRET_HEADER))) {
      await dropBody(request.body);
      return jsonAnswer(refuse("unavailable"));
    }
    if (!format.ok) {
      await dropBody(request.body);
      return jsonAnswer(format);
    }
    const ctx = closing ? null : await ready.catch(() => null);
    if (!ctx || closing) {
      await dropBody(request.body);
      return jsonAnswer(refuse("unavailable"));
    }
    running++;
    try {
      return await serveCall(ctx, request);
    } finally {
      if (--running === 0) idle?.();
    }
  };
  return {
    serve,
    fetch: async (request) => toResponse(await serve(request)),
    async cleanStaleTemps() {
      if (!format.ok) return;
      await cleanStaleTemps(await ready);
    },
    async close() {
      closing = true;
      if (running > 0) await new Promise<void>((resolve) => (idle = resolve));
      const ctx = await ready.catch(() => null);
      if (!ctx) return;
      await ctx.meta.close();
      await ctx.versions.close().catch(() => undefined);
      await ctx.base.close().catch(() => undefined);
    },
  };
}

/** A bound a caller may lower, never raise or remove: an integer from 1 to `max`, else `max`. */
function smallerBound(value: number | undefined, max: number): number {
  return value !== undefined && Number.isInteger(value) && value >= 1 && value <= max ? value : max;
}

async function openContext(
  baseDir: string,
  fileMode: number,
  dirMode: number,
  uploads: UploadLimits,
  walkBudget: WalkBudget,
): Promise<HostContext> {
  // The base folder itself is the operator's choice, so its path may pass
  // through links; from here on only the held descriptor is used.
  const base = await open(baseDir, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    await mkdir(inDir(base, META_DIR_NAME), { mode: 0o700 }).catch((error) => {
      if (errnoOf(error) !== "EEXIST") throw error;
    });
    const metaDir = await open(inDir(base, META_DIR_NAME), OPEN_NOFOLLOW);
    if (!(await metaDir.stat()).isDirectory()) {
      await metaDir.close();
      throw new Error("the disk root's .capvault-meta is not a folder");
    }
    const versions = await openVersionsDir(base).catch(async (error) => {
      await metaDir.close();
      throw error;
    });
    return {
      base,
      versions,
      meta: new MetaStore(metaDir),
      locks: new KeyedLock(),
      inFlight: new Set(),
      fileMode,
      dirMode,
      uploads,
      walkBudget,
      uploadSlots: new UploadSlots(),
    };
  } catch (error) {
    await base.close();
    if (errnoOf(error) === "ELOOP") throw new Error("the disk root's .capvault-meta is a link; refusing to use it");
    throw error;
  }
}
