import { baseName, type CapFiles, symlinksRefused, type Walked } from "./cap-files.ts";
import { isMissing, WorkspaceFsError } from "./fs-errors.ts";
import { WorkspaceGlob } from "./workspace-glob.ts";

/** `stat` as `@cloudflare/computer`'s Workspace filesystem answers it. */
export interface CapStatResult {
  name: string;
  inode: number;
  mode: number;
  mtime: number;
  size: number;
  isFile: boolean;
  isDirectory: boolean;
  isSymbolicLink: boolean;
}

/** One `readdir` entry, as `@cloudflare/computer` answers it. */
export interface CapDirent {
  name: string;
  parentPath: string;
  size: number;
  mtime: number;
  isFile: boolean;
  isDirectory: boolean;
  isSymbolicLink: boolean;
}

export interface CapGrepMatch {
  path: string;
  line: number;
  text: string;
  context?: { line: number; text: string; isMatch: boolean }[];
}

interface ReadWindow {
  encoding?: "utf8";
  byteOffset?: number;
  byteLength?: number;
}

const FILE_MODE = 0o100644;
const DIR_MODE = 0o040755;

/**
 * The filesystem face Think 0.23 and `@cloudflare/computer`'s tools use
 * (`workspace.fs`: readFile, writeFile, mkdir, rm, stat, readdir, find, grep,
 * and lstat, readlink, symlink, rename), over a vault cap. Paths are absolute
 * workspace paths, mapped to the cap by {@link CapFiles.rel}.
 */
export class CapWorkspaceFs {
  readonly #files: CapFiles;

  constructor(files: CapFiles) {
    this.#files = files;
  }

  readFile(path: string): Promise<ReadableStream<Uint8Array>>;
  readFile(path: string, encoding: "utf8"): Promise<string>;
  readFile(path: string, options: ReadWindow & { encoding?: undefined }): Promise<ReadableStream<Uint8Array>>;
  readFile(path: string, options: ReadWindow & { encoding: "utf8" }): Promise<string>;
  readFile(path: string, options: ReadWindow): Promise<string | ReadableStream<Uint8Array>>;
  async readFile(path: string, options?: "utf8" | ReadWindow): Promise<string | ReadableStream<Uint8Array>> {
    const o: ReadWindow = typeof options === "string" ? { encoding: options } : (options ?? {});
    const ranged = o.byteOffset !== undefined || o.byteLength !== undefined;
    if (o.encoding === "utf8" && !ranged) return this.#files.readText(path);
    const stream = await this.#files.readStream(path);
    const windowed = ranged ? stream.pipeThrough(byteWindow(o.byteOffset ?? 0, o.byteLength)) : stream;
    if (o.encoding !== "utf8") return windowed;
    return new Response(windowed).text();
  }

  async stat(path: string): Promise<CapStatResult> {
    const stat = await this.#files.statOf(path);
    if (stat === null) throw new WorkspaceFsError("ENOENT", "stat", path, "no such file or directory");
    const rel = this.#files.rel(path, "stat");
    const name = baseName(rel);
    if (stat.type === "dir")
      return {
        name,
        inode: 0,
        mode: DIR_MODE,
        mtime: 0,
        size: 0,
        isFile: false,
        isDirectory: true,
        isSymbolicLink: false,
      };
    return {
      name,
      inode: 0,
      mode: FILE_MODE,
      mtime: Date.parse(stat.modified),
      size: stat.size,
      isFile: true,
      isDirectory: false,
      isSymbolicLink: false,
    };
  }

  /** As {@link stat}: the vault has no symbolic links to not follow. */
  lstat(path: string): Promise<CapStatResult> {
    return this.stat(path);
  }

  async readlink(path: string): Promise<string> {
    throw symlinksRefused("readlink", path);
  }

  async symlink(_target: string, path: string): Promise<void> {
    throw symlinksRefused("symlink", path);
  }

  async readdir(path: string, options?: { limit?: number; offset?: number }): Promise<CapDirent[]> {
    const parentPath = this.#files.abs(this.#files.rel(path, "scandir"));
    const entries = await this.#files.children(path, options?.offset ?? 0, options?.limit ?? 1000);
    return entries.map((e) => ({
      name: baseName(e.rel),
      parentPath,
      size: e.size,
      mtime: e.mtime,
      isFile: e.type === "file",
      isDirectory: e.type === "dir",
      isSymbolicLink: false,
    }));
  }

  /** Text, bytes, or a stream (buffered, up to `maxBufferBytes`: the vault takes a stream of known length only). */
  async writeFile(
    path: string,
    content: string | Uint8Array | ReadableStream<Uint8Array>,
    options?: { mode?: number; exclusive?: boolean },
  ): Promise<void> {
    const data = content instanceof ReadableStream ? await this.#files.buffer(content, path) : content;
    await this.#files.write(path, data, { exclusive: options?.exclusive === true });
  }

  /**
   * Folders are implicit over a binding (a write makes the folders above it;
   * the binding has no folder method): `mkdir` checks and creates nothing. A
   * file there is EEXIST; an existing folder is EEXIST unless `recursive`;
   * without `recursive` a missing parent is ENOENT and a file parent ENOTDIR.
   */
  async mkdir(path: string, options?: { recursive?: boolean; mode?: number }): Promise<void> {
    await mkdirChecked(this.#files, path, options?.recursive === true);
  }

  rm(path: string, options?: { recursive?: boolean; force?: boolean }): Promise<void> {
    return this.#files.remove(path, options);
  }

  /** A file or a folder renamed (the vault's `move`, replacing a file at `newPath` as Node's rename does). */
  async rename(oldPath: string, newPath: string): Promise<void> {
    const [from, to] = [this.#files.rel(oldPath, "rename"), this.#files.rel(newPath, "rename")];
    await this.#files.call("rename", oldPath, (cap) => cap.move(from, to, { overwrite: true }));
  }

  /**
   * Files and folders below `directory` whose path relative to it matches
   * `pattern` (every one without a pattern), in the vault's listing order;
   * an `exclude` match is pruned with everything below it.
   */
  async find(
    directory: string,
    pattern?: string,
    options?: { limit?: number; offset?: number; exclude?: string[] },
  ): Promise<{ path: string; type: "file" | "dir" }[]> {
    const rel = this.#files.rel(directory, "find");
    const include = pattern === undefined ? null : globOf(pattern, "find", directory);
    const excludes = (options?.exclude ?? []).map((g) => globOf(g, "find", directory));
    await this.#requireDir(directory, "find");
    const offset = options?.offset ?? 0;
    const limit = options?.limit ?? Number.POSITIVE_INFINITY;
    const out: { path: string; type: "file" | "dir" }[] = [];
    let skipped = 0;
    const walked = await this.#files.walk(rel, "find", {
      prune: (below) => excludes.some((g) => g.matches(below)),
    });
    for (const entry of walked) {
      const below = relativeTo(rel, entry.rel);
      if (include && !include.matches(below)) continue;
      if (skipped++ < offset) continue;
      out.push({ path: this.#files.abs(entry.rel), type: entry.type });
      if (out.length >= limit) break;
    }
    return out;
  }

  /**
   * Lines matching `pattern` (literal, or a RegExp with `regex`) in the file at
   * `path` or the files below it (`include`/`exclude` globs relative to it).
   * Client-side: each file is read through the cap; files over `maxGrepBytes`
   * and files that are not UTF-8 are skipped.
   */
  async grep(
    pattern: string,
    path: string,
    options?: {
      regex?: boolean;
      ignoreCase?: boolean;
      context?: number;
      limit?: number;
      offset?: number;
      include?: string;
      exclude?: string[];
    },
  ): Promise<CapGrepMatch[]> {
    const o = options ?? {};
    const test = lineTest(pattern, o.regex === true, o.ignoreCase === true, path);
    const stat = await this.#files.statOf(path, "grep");
    if (stat === null) throw new WorkspaceFsError("ENOENT", "grep", path, "no such file or directory");
    const rel = this.#files.rel(path, "grep");
    let files: Walked[];
    if (stat.type === "file") files = [{ rel, type: "file", size: stat.size, mtime: 0 }];
    else {
      const include = o.include === undefined ? null : globOf(o.include, "grep", path);
      const excludes = (o.exclude ?? []).map((g) => globOf(g, "grep", path));
      const walked = await this.#files.walk(rel, "grep", {
        filesOnly: true,
        prune: (below) => excludes.some((g) => g.matches(below)),
      });
      files = walked.filter((f) => !include || include.matches(relativeTo(rel, f.rel)));
    }
    const offset = o.offset ?? 0;
    const limit = o.limit ?? Number.POSITIVE_INFINITY;
    const context = Math.max(0, o.context ?? 0);
    const out: CapGrepMatch[] = [];
    let skipped = 0;
    for (const file of files) {
      if (file.size > this.#files.maxGrepBytes) continue;
      const at = this.#files.abs(file.rel);
      let text: string;
      try {
        text = await this.#files.readText(at);
      } catch (error) {
        // Not text, or gone since the listing: nothing to search. Any other refusal stops the search.
        if (isMissing(error) || (error instanceof WorkspaceFsError && error.code === "EILSEQ")) continue;
        throw error;
      }
      const lines = text.split("\n");
      for (let i = 0; i < lines.length; i++) {
        if (!test(lines[i]!)) continue;
        if (skipped++ < offset) continue;
        const match: CapGrepMatch = { path: at, line: i + 1, text: lines[i]! };
        if (context > 0) {
          match.context = [];
          for (let k = Math.max(0, i - context); k <= Math.min(lines.length - 1, i + context); k++)
            match.context.push({ line: k + 1, text: lines[k]!, isMatch: test(lines[k]!) });
        }
        out.push(match);
        if (out.length >= limit) return out;
      }
    }
    return out;
  }

  async #requireDir(path: string, syscall: string): Promise<void> {
    const stat = await this.#files.statOf(path, syscall);
    if (stat === null) throw new WorkspaceFsError("ENOENT", syscall, path, "no such file or directory");
    if (stat.type === "file") throw new WorkspaceFsError("ENOTDIR", syscall, path, "not a directory");
  }
}

/** mkdir's checks, shared by both faces (see {@link CapWorkspaceFs.mkdir}). */
export async function mkdirChecked(files: CapFiles, path: string, recursive: boolean): Promise<void> {
  const rel = files.rel(path, "mkdir");
  if (rel === "") {
    if (recursive) return;
    throw new WorkspaceFsError("EEXIST", "mkdir", path, "the cap's root exists");
  }
  const stat = await files.statOf(path, "mkdir");
  if (stat?.type === "file") throw new WorkspaceFsError("EEXIST", "mkdir", path, "a file is there");
  if (stat?.type === "dir") {
    if (recursive) return;
    throw new WorkspaceFsError("EEXIST", "mkdir", path, "the directory exists");
  }
  if (!recursive) {
    const parent = rel.includes("/") ? files.abs(rel.slice(0, rel.lastIndexOf("/"))) : files.abs("");
    const up = await files.statOf(parent, "mkdir");
    if (up === null) throw new WorkspaceFsError("ENOENT", "mkdir", path, "its parent does not exist");
    if (up.type === "file") throw new WorkspaceFsError("ENOTDIR", "mkdir", path, "its parent is a file");
  }
  // The vault's folder (PUT /folder): empty, it is listed and survives, as Node's would.
  await files.call("mkdir", path, (cap) => cap.makeFolder(rel), "ENOTDIR");
}

export function globOf(pattern: string, syscall: string, path: string): WorkspaceGlob {
  return WorkspaceGlob.of(pattern, syscall, path);
}

/** `rel` (below `dir`, both cap paths) relative to `dir`. */
function relativeTo(dir: string, rel: string): string {
  return dir === "" ? rel : rel.slice(dir.length + 1);
}

function lineTest(pattern: string, regex: boolean, ignoreCase: boolean, path: string): (line: string) => boolean {
  if (regex) {
    let re: RegExp;
    try {
      re = new RegExp(pattern, ignoreCase ? "i" : "");
    } catch (error) {
      throw new WorkspaceFsError("EINVAL", "grep", path, (error as Error).message);
    }
    return (line) => re.test(line);
  }
  if (!ignoreCase) return (line) => line.includes(pattern);
  const lower = pattern.toLowerCase();
  return (line) => line.toLowerCase().includes(lower);
}

/** Passes `length` bytes from `offset` on (the rest without a length), then ends. */
function byteWindow(offset: number, length: number | undefined): TransformStream<Uint8Array, Uint8Array> {
  let at = 0;
  const end = length === undefined ? Number.POSITIVE_INFINITY : offset + length;
  return new TransformStream({
    transform(chunk, controller) {
      const [from, to] = [Math.max(offset - at, 0), Math.min(end - at, chunk.byteLength)];
      if (to > from) controller.enqueue(chunk.subarray(from, to));
      at += chunk.byteLength;
      if (at >= end) controller.terminate();
    },
  });
}
