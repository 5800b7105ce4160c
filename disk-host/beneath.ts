/**
 * Resolution of names beneath a directory the host holds open: the emulation
 * of `openat2(RESOLVE_BENEATH)` the whole disk backend rests on.
 *
 * The threat: an outsider with a shell in the cap's folder swaps a file or a
 * folder for a symlink to something outside while requests run. Checking a
 * name and then opening it (validate-then-open) loses that race. Here every
 * component is opened *relative to the directory actually held*, through
 * `/proc/self/fd/<dirfd>/<name>` with `O_NOFOLLOW`: the kernel looks `name` up
 * in that very directory, and refuses to follow it if it is a link. A link is
 * read and its target resolved by us, one component at a time, under the same
 * rules, so no swap between two steps can redirect a later one.
 */
import { type BigIntStats, constants } from "node:fs";
import { refuse } from "../shared/refusals.ts";
import { isReservedName } from "../shared/rel-path.ts";
import { ok, type Result } from "../shared/result.ts";
import { decodeUtf8Strict } from "../shared/strict-utf8.ts";
import { errnoOf, failFromFs } from "./fs-errors.ts";
import { type FileHandle, mkdir, open, readlink, rmdir } from "./sync-fs.ts";

/** Opens exactly the named entry: never through a link in its last component, never blocking on a FIFO. */
export const OPEN_NOFOLLOW = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
/** Link expansions allowed in one resolution (Linux's own limit); more is treated as a loop. */
export const MAX_LINK_EXPANSIONS = 40;
/**
 * Retries of one name after a concurrent change (a folder we just made was
 * removed again before we could open it) before giving up. Counted per name,
 * never per folder made: a path may legally need hundreds of new folders.
 */
const MAX_RETRIES = 16;

/** `name` inside the directory `dir` holds, looked up by the kernel in that directory, wherever it now is. */
export function inDir(dir: FileHandle, name: string): string {
  return `/proc/self/fd/${dir.fd}/${name}`;
}

/** The directory `dir` holds, as a path the kernel resolves to that very directory. */
export function heldPath(dir: FileHandle): string {
  return `/proc/self/fd/${dir.fd}`;
}

interface HeldDir {
  handle: FileHandle;
  /** Its name in the directory below it in the chain; `null` for the boundary. */
  name: string | null;
  /** Reached by a name the cap holder gave (not through a link): pruning may remove it. */
  plain: boolean;
  owned: boolean;
}

/**
 * The directories from a boundary (the cap's root) down to where a
 * resolution stands, each held open. `..` in a link target pops one; it can
 * never pop the boundary, so nothing resolves above it.
 */
export class DirChain {
  private constructor(private readonly dirs: HeldDir[]) {}

  /** A chain standing at `boundary`, which the caller keeps open and closes. */
  static beneath(boundary: FileHandle): DirChain {
    return new DirChain([{ handle: boundary, name: null, plain: false, owned: false }]);
  }

  /** The same chain, borrowing every handle: closing the fork closes only what it opened itself. */
  fork(): DirChain {
    return new DirChain(this.dirs.map((dir) => ({ ...dir, owned: false })));
  }

  get top(): FileHandle {
    return this.dirs[this.dirs.length - 1]!.handle;
  }

  get boundary(): FileHandle {
    return this.dirs[0]!.handle;
  }

  get atBoundary(): boolean {
    return this.dirs.length === 1;
  }

  push(handle: FileHandle, name: string, plain: boolean): void {
    this.dirs.push({ handle, name, plain, owned: true });
  }

  async pop(): Promise<void> {
    const dir = this.dirs.pop();
    if (dir?.owned) await dir.handle.close();
  }

  async dropToBoundary(): Promise<void> {
    while (this.dirs.length > 1) await this.pop();
  }

  /** Takes the top directory out of the chain; if `owned`, the caller must close it. */
  detachTop(): { handle: FileHandle; owned: boolean } {
    const dir = this.dirs.length > 1 ? this.dirs.pop()! : { ...this.dirs[0]!, owned: false };
    return { handle: dir.handle, owned: dir.owned };
  }

  /** The plain folders from the top down, each with the folder holding it: what pruning may remove. */
  prunable(): { parent: FileHandle; name: string }[] {
    const out: { parent: FileHandle; name: string }[] = [];
    for (let i = this.dirs.length - 1; i >= 1 && this.dirs[i]!.plain; i--) {
      out.push({ parent: this.dirs[i - 1]!.handle, name: this.dirs[i]!.name! });
    }
    return out;
  }

  async close(): Promise<void> {
    const dirs = this.dirs.splice(0).reverse();
    for (const dir of dirs) if (dir.owned) await dir.handle.close().catch(() => undefined);
  }
}

/** One name to resolve; `fromLink` when it came from a link target rather than from the cap holder. */
export interface Step {
  name: string;
  fromLink: boolean;
}

export function userSteps(segments: readonly string[]): Step[] {
  return segments.map((name) => ({ name, fromLink: false }));
}

/**
 * Where a resolution ended. Every variant holding a `chain` leaves it to the
 * caller to close (and `file` too).
 */
export type WalkEnd =
  /** The path is a directory: `chain.top`. */
  | { kind: "dir"; chain: DirChain }
  /** A regular file, opened; `chain.top` holds it under `name`. */
  | { kind: "file"; chain: DirChain; name: string; file: FileHandle; stat: BigIntStats }
  /** Nothing at `name` in `chain.top` (a name the holder gave, not a dangling link). */
  | { kind: "missing"; chain: DirChain; name: string }
  /** A link at `name`, reported instead of followed (`followFinal: false`). */
  | { kind: "link"; chain: DirChain; name: string }
  /** A FIFO, socket or device: never opened for I/O, never served. */
  | { kind: "special"; chain: DirChain; name: string }
  /** A folder the holder named on the way is missing. */
  | { kind: "absent" }
  /** Something the holder named on the way is not a folder. */
  | { kind: "blocked" };

export interface WalkOptions {
  /** Follow a link in the last component (read, write) or report it as `link` (remove, move). */
  followFinal: boolean;
  /** Create missing folders the holder named: those on the way, and with `final` the last one too. */
  mkdirs?: { mode: number; final: boolean } | undefined;
}

/**
 * Resolves `steps` beneath `start.boundary`, from `start.top`. Any link whose
 * target leaves the boundary (absolute outside its real path, `..` above it,
 * dangling, a reserved `.capvault-` name, or over {@link MAX_LINK_EXPANSIONS})
 * fails with `outside_root`; nothing outside is opened, created or changed.
 *
 * @example
 * const end = await walk(DirChain.beneath(rootDir), userSteps(["notes", "a.md"]), { followFinal: true });
 * if (end.ok && end.value.kind === "file") serve(end.value.file);
 */
export async function walk(start: DirChain, steps: readonly Step[], options: WalkOptions): Promise<Result<WalkEnd>> {
  const chain = start.fork();
  const queue = [...steps];
  let expansions = 0;
  let retries = 0;
  let boundaryReal: string[] | null = null;
  let justMade: Step | null = null;
  // A walk that made folders and then fails removes the ones left empty, so
  // a refused write leaves no hidden folders behind (they would hide nothing
  // on R2, and pile up with every retry).
  // (Not on ENOENT: a concurrent remover is at work, and the caller retries.)
  const unwind = async (error?: unknown): Promise<void> => {
    if (options.mkdirs && errnoOf(error) !== "ENOENT") await pruneEmptyDirs(chain);
    await chain.close();
  };
  const outside = async (): Promise<Result<never>> => {
    await unwind();
    return refuse("outsideRoot");
  };
  try {
    while (queue.length > 0) {
      const step = queue.shift()!;
      const { name } = step;
      if (name === "" || name === ".") continue;
      if (name === "..") {
        if (chain.atBoundary) return await outside();
        await chain.pop();
        continue;
      }
      // Temp and metadata files are reserved: no link may lead the API to them.
      if (step.fromLink && isReservedName(name)) return await outside();
      const last = queue.length === 0;
      let handle: FileHandle;
      try {
        handle = await open(inDir(chain.top, name), OPEN_NOFOLLOW);
      } catch (error) {
        const code = errnoOf(error);
        if (code === "ELOOP") {
          if (last && !options.followFinal) return ok({ kind: "link", chain, name });
          if (++expansions > MAX_LINK_EXPANSIONS) return await outside();
          const target = await readLinkIn(chain.top, name);
          if (target === "changed") {
            queue.unshift(step);
            continue;
          }
          if (target === null) return await outside();
          if (target.startsWith("/")) {
            // An absolute target counts only if it lies under the boundary's
            // real path; it is then walked from the boundary we hold, never
            // from `/`, so a renamed ancestor cannot redirect it.
            boundaryReal ??= components(await readlink(heldPath(chain.boundary)));
            const parts = components(target);
            if (parts.length < boundaryReal.length || !boundaryReal.every((part, i) => parts[i] === part)) {
              return await outside();
            }
            await chain.dropToBoundary();
            queue.unshift(...parts.slice(boundaryReal.length).map(linkStep));
          } else {
            queue.unshift(...target.split("/").map(linkStep));
          }
          continue;
        }
        if (code === "ENOENT") {
          if (step.fromLink) return await outside();
          if (options.mkdirs && (!last || options.mkdirs.final)) {
            // Made once already and gone again: someone is removing it as fast as we make it.
            if (justMade === step && ++retries > MAX_RETRIES) throw error;
            await mkdirIn(chain.top, name, options.mkdirs.mode);
            justMade = step;
            queue.unshift(step);
            continue;
          }
          if (last) return ok({ kind: "missing", chain, name });
          await chain.close();
          return ok({ kind: "absent" });
        }
        throw error;
      }
      let stat: BigIntStats;
      try {
        stat = await handle.stat({ bigint: true });
      } catch (error) {
        await handle.close();
        throw error;
      }
      if (stat.isDirectory()) {
        chain.push(handle, name, !step.fromLink);
        // mkdir's mode is cut by the umask; set exactly the configured one.
        if (justMade === step && options.mkdirs) await handle.chmod(options.mkdirs.mode);
        justMade = null;
        continue;
      }
      if (last && stat.isFile()) return ok({ kind: "file", chain, name, file: handle, stat });
      await handle.close();
      if (last) return ok({ kind: "special", chain, name });
      if (step.fromLink) return await outside();
      await unwind();
      return ok({ kind: "blocked" });
    }
    return ok({ kind: "dir", chain });
  } catch (error) {
    await unwind(error);
    return failFromFs(error, options.mkdirs ? "writing" : "reading");
  }
}

/** Closes whatever a {@link WalkEnd} holds. */
export async function closeEnd(end: WalkEnd): Promise<void> {
  if (end.kind === "file") await end.file.close().catch(() => undefined);
  if ("chain" in end) await end.chain.close();
}

/** The cap's root, resolved level by level: `chain` stands at its last level. */
export type RootEnd =
  | { kind: "root"; chain: DirChain; release(): Promise<void> }
  /** A level is missing: the root is empty (it "exists", as on R2). */
  | { kind: "absent" }
  /** A level is not a folder. */
  | { kind: "blocked" };

/**
 * Resolves the levels of a cap's root: level 0 beneath `base`, each next
 * level beneath the folder the previous one reached. So a child cap whose
 * root passes through a link gets no more than its parent could reach.
 * With `mkdirMode`, missing levels are created.
 */
export async function openRoot(
  base: FileHandle,
  levels: readonly (readonly string[])[],
  mkdirMode: number | null,
): Promise<Result<RootEnd>> {
  const owned: FileHandle[] = [];
  const release = async () => {
    for (const handle of owned.splice(0).reverse()) await handle.close().catch(() => undefined);
  };
  let boundary = base;
  for (const level of levels) {
    if (level.length === 0) continue;
    const mkdirs = mkdirMode === null ? undefined : { mode: mkdirMode, final: true };
    const end = await walk(DirChain.beneath(boundary), userSteps(level), { followFinal: true, mkdirs });
    if (!end.ok) {
      await release();
      return end;
    }
    if (end.value.kind === "dir") {
      const top = end.value.chain.detachTop();
      await end.value.chain.close();
      if (top.owned) owned.push(top.handle);
      boundary = top.handle;
      continue;
    }
    const kind = end.value.kind === "absent" || end.value.kind === "missing" ? "absent" : "blocked";
    await closeEnd(end.value);
    await release();
    return ok({ kind });
  }
  return ok({ kind: "root", chain: DirChain.beneath(boundary), release });
}

/**
 * Removes the folders a delete or a failed write left empty, from the top of
 * the chain down, stopping at the first that is not empty. Never the boundary
 * (the cap's root), and never a folder reached through a link.
 */
export async function pruneEmptyDirs(chain: DirChain): Promise<void> {
  for (const { parent, name } of chain.prunable()) {
    try {
      // rmdir never follows a link and removes only an empty folder.
      await rmdir(inDir(parent, name));
    } catch {
      return;
    }
  }
}

/** Identifies `name` in `dir` for the keyed lock, by the folder's identity rather than any path. */
export async function entryKey(dir: FileHandle, name: string): Promise<string> {
  const stat = await dir.stat({ bigint: true });
  return `${stat.dev}:${stat.ino}/${name}`;
}

function linkStep(name: string): Step {
  return { name, fromLink: true };
}

function components(path: string): string[] {
  return path.split("/").filter((part) => part !== "" && part !== ".");
}

/** The link's target; `null` if it is not UTF-8 (refused), `"changed"` if it stopped being a link. */
async function readLinkIn(dir: FileHandle, name: string): Promise<string | null | "changed"> {
  let raw: Buffer;
  try {
    raw = await readlink(inDir(dir, name), { encoding: "buffer" });
  } catch (error) {
    const code = errnoOf(error);
    if (code === "EINVAL" || code === "ENOENT") return "changed";
    throw error;
  }
  return decodeUtf8Strict(raw);
}

async function mkdirIn(dir: FileHandle, name: string, mode: number): Promise<void> {
  try {
    // mkdir never follows a link in its last component (EEXIST instead).
    await mkdir(inDir(dir, name), { mode });
  } catch (error) {
    if (errnoOf(error) !== "EEXIST") throw error;
  }
}
