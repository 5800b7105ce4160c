import type { FileInfo, WorkspaceFsLike } from "@cloudflare/shell";
import { baseName, CapFiles, type CapWorkspaceOptions, symlinksRefused, type Walked } from "./cap-files.ts";
import { CapWorkspaceFs, globOf, mkdirChecked } from "./cap-workspace-fs.ts";
import { isMissing, WorkspaceFsError } from "./fs-errors.ts";
import type { VaultCap, VaultStat } from "./vault-cap.ts";
import { WorkspaceGlob } from "./workspace-glob.ts";

const DIR_MIME = "inode/directory";

/**
 * An Agents SDK workspace over a vault cap (issue 35): the methods of
 * `@cloudflare/shell`'s `WorkspaceFsLike` on the object itself (so
 * `createWorkspaceStateBackend(ws)` and `new WorkspaceFileSystem(ws)` run on
 * it), and `fs`, the face Think 0.23 types its `workspace` by and
 * `@cloudflare/computer`'s tools call (`override workspace = new CapWorkspace(...)`).
 *
 * The cap decides everything: rights, paths, quotas, revocation (a revoked
 * cap refuses the next call, as EACCES with `no_such_cap` in the message).
 * Refusals arrive as {@link WorkspaceFsError}s with Node's codes. What the
 * vault has no notion of is refused or documented (docs/workers.md): no
 * symbolic links, folders implicit (`mkdir` checks and creates nothing).
 */
export class CapWorkspace implements WorkspaceFsLike {
  readonly #files: CapFiles;
  /** The filesystem Think and `@cloudflare/computer`'s tools use. */
  readonly fs: CapWorkspaceFs;

  /** Set only while {@link perCall} constructs. */
  static #opening: (() => VaultCap) | undefined;

  /**
   * Over one stub: a `CapBinding` service binding, or a `CapVault.open(token)`
   * stub (which lives no longer than the request that opened it).
   */
  constructor(cap: VaultCap, options?: CapWorkspaceOptions) {
    const open = CapWorkspace.#opening ?? (() => cap);
    this.#files = new CapFiles(open, options);
    this.fs = new CapWorkspaceFs(this.#files);
  }

  /**
   * Over a stub opened afresh for every call, as an Agent does that keeps the
   * token (`() => env.VAULT.open(this.state.token)`). A separate constructor
   * because a Workers RPC stub is itself callable: the adapter never guesses.
   */
  static perCall(open: () => VaultCap, options?: CapWorkspaceOptions): CapWorkspace {
    CapWorkspace.#opening = open;
    try {
      return new CapWorkspace(undefined as unknown as VaultCap, options);
    } finally {
      CapWorkspace.#opening = undefined;
    }
  }

  /** The file's text, or null when nothing is there. */
  async readFile(path: string): Promise<string | null> {
    return orNull(this.#files.readText(path));
  }

  async readFileBytes(path: string): Promise<Uint8Array | null> {
    return orNull(this.#files.readBytes(path));
  }

  async readFileStream(path: string): Promise<ReadableStream<Uint8Array> | null> {
    return orNull(this.#files.readStream(path));
  }

  async writeFile(path: string, content: string, mimeType?: string): Promise<void> {
    await this.#files.write(path, content, contentType(mimeType));
  }

  async writeFileBytes(path: string, data: Uint8Array | ArrayBuffer, mimeType?: string): Promise<void> {
    await this.#files.write(path, data instanceof Uint8Array ? data : new Uint8Array(data), contentType(mimeType));
  }

  /** Buffered, up to `maxBufferBytes` (the vault takes a stream of known length only). */
  async writeFileStream(path: string, stream: ReadableStream<Uint8Array>, mimeType?: string): Promise<void> {
    await this.#files.write(path, await this.#files.buffer(stream, path), contentType(mimeType));
  }

  /**
   * Read, then written back only if the file is unchanged (its etag): a
   * concurrent write in between is EAGAIN, never silently lost.
   */
  async appendFile(path: string, content: string, mimeType?: string): Promise<void> {
    const stat = await this.#files.statOf(path, "append");
    if (stat === null) {
      await this.#files.write(path, content, { ...contentType(mimeType), exclusive: true });
      return;
    }
    if (stat.type === "dir") throw new WorkspaceFsError("EISDIR", "append", path, "a directory is there");
    const existing = await this.#files.readBytes(path);
    const extra = new TextEncoder().encode(content);
    const merged = new Uint8Array(existing.byteLength + extra.byteLength);
    merged.set(existing);
    merged.set(extra, existing.byteLength);
    const o: { contentType?: string; ifMatch?: string } = contentType(mimeType);
    if (stat.etag) o.ifMatch = stat.etag;
    await this.#files.write(path, merged, o);
  }

  /** True if a file was deleted, false if nothing was there; a folder is EISDIR (use `rm`). */
  async deleteFile(path: string): Promise<boolean> {
    const stat = await this.#files.statOf(path, "unlink");
    if (stat === null) return false;
    if (stat.type === "dir") throw new WorkspaceFsError("EISDIR", "unlink", path, "a directory: use rm()");
    const rel = this.#files.rel(path, "unlink");
    try {
      await this.#files.call("unlink", path, (cap) => cap.delete(rel));
      return true;
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
  }

  /** Whether anything is there. A refusal other than "nothing there" (a revoked cap, say) is thrown, not `false`. */
  async exists(path: string): Promise<boolean> {
    return (await this.#files.statOf(path, "access")) !== null;
  }

  async fileExists(path: string): Promise<boolean> {
    return (await this.#files.statOf(path, "access"))?.type === "file";
  }

  async stat(path: string): Promise<FileInfo | null> {
    const stat = await this.#files.statOf(path);
    return stat === null ? null : this.#info(this.#files.rel(path, "stat"), stat);
  }

  /** As {@link stat}: the vault has no symbolic links. */
  lstat(path: string): Promise<FileInfo | null> {
    return this.stat(path);
  }

  /** See {@link CapWorkspaceFs.mkdir}: folders are implicit, nothing is created. */
  async mkdir(path: string, opts?: { recursive?: boolean }): Promise<void> {
    await mkdirChecked(this.#files, path, opts?.recursive === true);
  }

  async readDir(dir = "/", opts?: { limit?: number; offset?: number }): Promise<FileInfo[]> {
    const entries = await this.#files.children(dir, opts?.offset ?? 0, opts?.limit ?? 1000);
    return entries.map((e) => this.#walkedInfo(e));
  }

  rm(path: string, opts?: { recursive?: boolean; force?: boolean }): Promise<void> {
    return this.#files.remove(path, opts);
  }

  /** A file copied; a folder with `recursive`, file by file (bounded as walks are). */
  async cp(src: string, dest: string, opts?: { recursive?: boolean }): Promise<void> {
    const stat = await this.#files.statOf(src, "cp");
    if (stat === null) throw new WorkspaceFsError("ENOENT", "cp", src, "no such file or directory");
    if (stat.type === "file") {
      await this.#files.write(dest, await this.#files.readBytes(src), { contentType: stat.contentType });
      return;
    }
    if (!opts?.recursive) throw new WorkspaceFsError("EISDIR", "cp", src, "a directory: pass recursive");
    const from = this.#files.rel(src, "cp");
    const to = this.#files.rel(dest, "cp");
    for (const file of await this.#files.walk(from, "cp", { filesOnly: true })) {
      const below = from === "" ? file.rel : file.rel.slice(from.length + 1);
      const target = this.#files.abs(to === "" ? below : `${to}/${below}`);
      await this.#files.write(target, await this.#files.readBytes(this.#files.abs(file.rel)));
    }
  }

  /** The vault's `move` (a folder too, within its bounds), replacing a file at `dest` as Node's rename does. */
  async mv(src: string, dest: string, _opts?: { recursive?: boolean }): Promise<void> {
    await this.fs.rename(src, dest);
  }

  async symlink(_target: string, linkPath: string): Promise<void> {
    throw symlinksRefused("symlink", linkPath);
  }

  async readlink(path: string): Promise<string> {
    throw symlinksRefused("readlink", path);
  }

  /**
   * Files and folders whose absolute workspace path matches `pattern` (shared/glob-compile.ts),
   * in the vault's listing order. The walk starts at the pattern's literal leading folders.
   */
  async glob(pattern: string): Promise<FileInfo[]> {
    const absolute = pattern.startsWith("/") ? pattern : `${this.#files.abs("")}/${pattern}`;
    globOf(absolute, "glob", pattern);
    // The literal folders the pattern starts with: the walk need not look elsewhere.
    const segments = absolute.split("/").filter((s) => s !== "");
    const literal: string[] = [];
    for (const s of segments.slice(0, -1)) {
      if (/[*?[{\\]/.test(s)) break;
      literal.push(s);
    }
    const start = `/${literal.join("/")}`;
    let base: string;
    try {
      base = this.#files.rel(start, "glob");
    } catch (error) {
      // A pattern outside the mount matches nothing of this cap.
      if (error instanceof WorkspaceFsError && error.code === "EACCES") return [];
      throw error;
    }
    const stat = await this.#files.statOf(start, "glob");
    if (stat === null) return [];
    const glob = WorkspaceGlob.of(absolute.replace(/^\/+/, ""), "glob", pattern);
    if (stat.type === "file") {
      const info = this.#info(base, stat);
      return glob.matches(info.path.slice(1)) ? [info] : [];
    }
    const walked = await this.#files.walk(base, "glob");
    return walked.map((e) => this.#walkedInfo(e)).filter((info) => glob.matches(info.path.slice(1)));
  }

  #info(rel: string, stat: VaultStat): FileInfo {
    const path = this.#files.abs(rel);
    const name = baseName(rel);
    if (stat.type === "dir")
      return { path, name, type: "directory", mimeType: DIR_MIME, size: 0, createdAt: 0, updatedAt: 0 };
    const t = Date.parse(stat.modified);
    return { path, name, type: "file", mimeType: stat.contentType, size: stat.size, createdAt: t, updatedAt: t };
  }

  #walkedInfo(e: Walked): FileInfo {
    const path = this.#files.abs(e.rel);
    const name = baseName(e.rel);
    if (e.type === "dir")
      return { path, name, type: "directory", mimeType: DIR_MIME, size: 0, createdAt: 0, updatedAt: 0 };
    return { path, name, type: "file", mimeType: "", size: e.size, createdAt: e.mtime, updatedAt: e.mtime };
  }
}

async function orNull<T>(read: Promise<T>): Promise<T | null> {
  try {
    return await read;
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
}

const contentType = (mimeType: string | undefined): { contentType?: string } =>
  mimeType ? { contentType: mimeType } : {};
