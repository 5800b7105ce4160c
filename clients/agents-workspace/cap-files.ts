import { type FsCode, isMissing, toFsError, WorkspaceFsError } from "./fs-errors.ts";
import type { VaultCap, VaultStat } from "./vault-cap.ts";

/** Options of {@link CapWorkspace}. */
export interface CapWorkspaceOptions {
  /**
   * The workspace path the cap's root appears at (default `/`). Think's tools
   * default to `/workspace`: with `mount: "/workspace"`, `/workspace/a.md` is the
   * cap's `a.md`, and a path outside the mount is refused (EACCES) before any call.
   */
  mount?: string;
  /** Most files a walk (glob, find, grep, recursive rm and cp) visits; past it, E2BIG and nothing changed. Default 10,000. */
  maxWalk?: number;
  /** Largest stream `writeFile`/`writeFileStream` buffers (the vault takes a stream of known length only). Default 16 MiB. */
  maxBufferBytes?: number;
  /** Largest file `grep` reads; bigger ones are skipped. Default 1 MiB. */
  maxGrepBytes?: number;
}

/** One file or folder found by a walk: its path relative to the cap's root. */
export interface Walked {
  rel: string;
  type: "file" | "dir";
  size: number;
  mtime: number;
}

const LIST_PAGE = 1000;

/**
 * The vault calls both workspace faces share: workspace paths to cap paths,
 * refusals to Node-like errors, and bounded walks over `list`.
 */
export class CapFiles {
  readonly #open: () => VaultCap;
  readonly mount: string;
  readonly maxWalk: number;
  readonly maxBufferBytes: number;
  readonly maxGrepBytes: number;

  /** `open`: the stub for one call (the same one each time, or a fresh one). */
  constructor(open: () => VaultCap, options: CapWorkspaceOptions = {}) {
    this.#open = open;
    this.mount = normalize(options.mount ?? "/");
    this.maxWalk = options.maxWalk ?? 10_000;
    this.maxBufferBytes = options.maxBufferBytes ?? 16 * 1024 * 1024;
    this.maxGrepBytes = options.maxGrepBytes ?? 1024 * 1024;
  }

  /** The stub for this call. */
  get cap(): VaultCap {
    return this.#open();
  }

  /**
   * The cap path (relative, `""` for the root) of a workspace path. `.` and
   * empty segments go, as Node resolves them; `..` is kept for the vault to
   * refuse (`path_escapes`), never resolved here into a path the caller did not name.
   */
  rel(path: string, syscall: string): string {
    const absolute = normalize(path.startsWith("/") ? path : `${this.mount}/${path}`);
    if (this.mount === "/") return absolute.slice(1);
    if (absolute === this.mount) return "";
    if (!absolute.startsWith(`${this.mount}/`))
      throw new WorkspaceFsError("EACCES", syscall, path, `outside the workspace's mount ${this.mount}`);
    return absolute.slice(this.mount.length + 1);
  }

  /** The workspace path of a cap path. */
  abs(rel: string): string {
    if (rel === "") return this.mount;
    return this.mount === "/" ? `/${rel}` : `${this.mount}/${rel}`;
  }

  /** A vault call, its refusal as a Node-like error. */
  async call<T>(syscall: string, path: string, run: (cap: VaultCap) => Promise<T>, conflict?: FsCode): Promise<T> {
    try {
      return await run(this.cap);
    } catch (error) {
      throw toFsError(error, syscall, path, conflict);
    }
  }

  /** The path's stat, or null when nothing is there. */
  async statOf(path: string, syscall = "stat"): Promise<VaultStat | null> {
    const rel = this.rel(path, syscall);
    try {
      return await this.call(syscall, path, (cap) => cap.stat(rel), "ENOTDIR");
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  /** A file's bytes; ENOENT when missing, EISDIR for a folder. */
  async readBytes(path: string): Promise<Uint8Array> {
    const rel = this.rel(path, "open");
    if (rel === "") throw new WorkspaceFsError("EISDIR", "open", path, "the cap's root is a directory");
    return this.call("open", path, (cap) => cap.read(rel), "EISDIR");
  }

  async readText(path: string): Promise<string> {
    const rel = this.rel(path, "open");
    if (rel === "") throw new WorkspaceFsError("EISDIR", "open", path, "the cap's root is a directory");
    return this.call("open", path, (cap) => cap.readText(rel), "EISDIR");
  }

  /** A file's bytes as a stream, never held whole here. */
  async readStream(path: string): Promise<ReadableStream<Uint8Array>> {
    const rel = this.rel(path, "open");
    if (rel === "") throw new WorkspaceFsError("EISDIR", "open", path, "the cap's root is a directory");
    return this.call("open", path, (cap) => cap.readStream(rel), "EISDIR");
  }

  /** Writes bytes or text; `exclusive` refuses an existing file (EEXIST); `ifMatch` an etag the file must still have. */
  async write(
    path: string,
    data: Uint8Array | string,
    options: { contentType?: string; exclusive?: boolean; ifMatch?: string } = {},
  ): Promise<void> {
    const rel = this.rel(path, "write");
    if (rel === "") throw new WorkspaceFsError("EISDIR", "write", path, "the cap's root is a directory");
    const o: { contentType?: string; ifNoneMatch?: string; ifMatch?: string } = {};
    if (options.contentType) o.contentType = options.contentType;
    if (options.exclusive) o.ifNoneMatch = "*";
    if (options.ifMatch) o.ifMatch = options.ifMatch;
    try {
      await this.cap.write(rel, data, o);
    } catch (error) {
      const refused = toFsError(error, "write", path, "EISDIR");
      // With `exclusive`, a failed If-None-Match means the file exists.
      if (options.exclusive && refused.vaultCode === "precondition_failed")
        throw new WorkspaceFsError("EEXIST", "write", path, (error as Error).message, refused.vaultCode);
      throw refused;
    }
  }

  /** A stream's bytes, whole, up to {@link maxBufferBytes} (EFBIG past it, the stream cancelled). */
  async buffer(stream: ReadableStream<Uint8Array>, path: string): Promise<Uint8Array> {
    const reader = stream.getReader();
    const parts: Uint8Array[] = [];
    let total = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > this.maxBufferBytes) {
        await reader.cancel().catch(() => undefined);
        throw new WorkspaceFsError("EFBIG", "write", path, `a stream over ${this.maxBufferBytes} bytes`);
      }
      parts.push(value);
    }
    return concat(parts, total);
  }

  /**
   * Removes a file, or with `recursive` a folder file by file (every file below
   * it listed first, at most {@link maxWalk}, else E2BIG and nothing deleted).
   * A folder without `recursive`: ENOTEMPTY if it holds anything; an empty one
   * stays (the binding has no folder delete; folders are implicit).
   */
  async remove(path: string, options: { recursive?: boolean; force?: boolean } = {}): Promise<void> {
    const rel = this.rel(path, "rm");
    if (rel === "") throw new WorkspaceFsError("EPERM", "rm", path, "the cap's root cannot be removed");
    const stat = await this.statOf(path, "rm");
    if (stat === null) {
      if (options.force) return;
      throw new WorkspaceFsError("ENOENT", "rm", path, "no such file or directory");
    }
    if (stat.type === "file") {
      await this.call("rm", path, (cap) => cap.delete(rel));
      return;
    }
    const files = await this.walk(rel, "rm", { filesOnly: true, limit: options.recursive ? undefined : 1 });
    if (files.length === 0) return;
    if (!options.recursive) throw new WorkspaceFsError("ENOTEMPTY", "rm", path, "directory not empty");
    for (const file of files) {
      const at = this.abs(file.rel);
      try {
        await this.call("rm", at, (cap) => cap.delete(file.rel));
      } catch (error) {
        // Gone meanwhile is what was asked; anything else stops the removal where it is.
        if (!isMissing(error)) throw error;
      }
    }
  }

  /**
   * Everything below the folder `rel` (relative paths from the cap's root):
   * files from `list` with `depth: 0`, page by page, and each folder once, just
   * before its first file (folders holding no file are not seen). Refused past
   * {@link maxWalk} files with E2BIG; `limit` stops early instead.
   */
  async walk(
    rel: string,
    syscall: string,
    options: { filesOnly?: boolean; limit?: number; prune?: (relBelow: string) => boolean } = {},
  ): Promise<Walked[]> {
    const path = this.abs(rel);
    const out: Walked[] = [];
    const seen = new Set<string>();
    let cursor: string | null = null;
    let files = 0;
    do {
      const options_: { cursor?: string; limit: number; depth: number } = { limit: LIST_PAGE, depth: 0 };
      if (cursor) options_.cursor = cursor;
      const page = await this.call(syscall, path, (cap) => cap.list(rel, options_), "ENOTDIR");
      for (const entry of page.entries) {
        if (entry.type !== "file") continue;
        if (++files > this.maxWalk)
          throw new WorkspaceFsError("E2BIG", syscall, path, `more than ${this.maxWalk} files below it`);
        const segments = entry.name.split("/");
        let below = "";
        let pruned = false;
        for (let i = 0; i < segments.length - 1; i++) {
          below = below ? `${below}/${segments[i]}` : segments[i]!;
          if (options.prune?.(below)) {
            pruned = true;
            break;
          }
          if (!options.filesOnly && !seen.has(below)) {
            seen.add(below);
            out.push({ rel: join(rel, below), type: "dir", size: 0, mtime: 0 });
          }
        }
        if (pruned || options.prune?.(entry.name)) continue;
        out.push({ rel: join(rel, entry.name), type: "file", size: entry.size ?? 0, mtime: time(entry.modified) });
        if (options.limit !== undefined && out.length >= options.limit) return out;
      }
      cursor = page.cursor;
    } while (cursor);
    return out;
  }

  /** The direct children of a folder, `offset` skipped, at most `limit`, paging through `list`. */
  async children(path: string, offset = 0, limit = 1000): Promise<Walked[]> {
    const rel = this.rel(path, "scandir");
    const stat = await this.statOf(path, "scandir");
    if (stat === null) throw new WorkspaceFsError("ENOENT", "scandir", path, "no such file or directory");
    if (stat.type === "file") throw new WorkspaceFsError("ENOTDIR", "scandir", path, "not a directory");
    const out: Walked[] = [];
    let skipped = 0;
    let cursor: string | null = null;
    do {
      const o: { cursor?: string; limit: number } = { limit: LIST_PAGE };
      if (cursor) o.cursor = cursor;
      const page = await this.call("scandir", path, (cap) => cap.list(rel, o), "ENOTDIR");
      for (const entry of page.entries) {
        if (skipped++ < offset) continue;
        out.push({ rel: join(rel, entry.name), type: entry.type, size: entry.size ?? 0, mtime: time(entry.modified) });
        if (out.length >= limit) return out;
      }
      cursor = page.cursor;
    } while (cursor);
    return out;
  }
}

export const symlinksRefused = (syscall: string, path: string) =>
  new WorkspaceFsError("ENOTSUP", syscall, path, "symbolic links are not supported by the vault");

/** `/`-rooted, `.` and empty segments dropped (`..` kept). */
function normalize(path: string): string {
  const parts = path.split("/").filter((p) => p !== "" && p !== ".");
  return `/${parts.join("/")}`;
}

export function join(dir: string, name: string): string {
  return dir === "" ? name : `${dir}/${name}`;
}

export const baseName = (rel: string) => rel.slice(rel.lastIndexOf("/") + 1);

export const time = (iso: string | undefined) => (iso ? Date.parse(iso) : 0);

export function concat(parts: Uint8Array[], total: number): Uint8Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}
