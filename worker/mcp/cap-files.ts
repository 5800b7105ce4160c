import type { CapObject } from "../../durable-objects/cap-object.ts";
import type { TextFiles } from "../../memory-tool/text-files.ts";
import { refuse } from "../../shared/refusals.ts";
import { failed, ok, type Result } from "../../shared/result.ts";
import { capStubTextFiles, wholeRead } from "../cap-stub-text-files.ts";
import type { Env } from "../env.ts";
import { mcpRefusal } from "./mcp-refusals.ts";

/** What the MCP tools do with a cap: text files, plus whole files as bytes and folder checks. */
export interface CapFiles extends TextFiles {
  /** A whole file's bytes; `too_large` past `maxBytes`, refused before a byte is read when its size says so. */
  readBytes(path: string, maxBytes: number): Promise<Result<Uint8Array>>;
  /** Makes a folder that stays while empty (see CapObject.makeFolder). */
  checkFolder(path: string): Promise<Result<null>>;
}

/**
 * {@link CapFiles} over a cap's Durable Object: every call is decided there.
 * With `env`, reads are granted there and performed here, as `GET /file`'s.
 */
export function capFiles(cap: DurableObjectStub<CapObject>, env?: Env): CapFiles {
  return {
    ...capStubTextFiles(cap, env),
    async readBytes(path, maxBytes) {
      const read = await wholeRead(cap, env, path);
      if (!read.ok) return read;
      if (read.value.status !== "body") return refuse("unavailable");
      return readAll(read.value.body, read.value.meta.size, maxBytes);
    },
    checkFolder: async (path) => (await cap.makeFolder(path)) as Result<null>,
  };
}

async function readAll(body: ReadableStream<Uint8Array>, size: number, maxBytes: number): Promise<Result<Uint8Array>> {
  if (size > maxBytes) {
    await body.cancel().catch(() => undefined);
    return failed(mcpRefusal("mediaTooLarge", { max: maxBytes }));
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    // A file that grew since its size was read is cut off here rather than read without bound.
    if (at + value.byteLength > size) {
      await reader.cancel().catch(() => undefined);
      return refuse("unavailable");
    }
    bytes.set(value, at);
    at += value.byteLength;
  }
  return at === size ? ok(bytes) : refuse("unavailable");
}

/**
 * The official server names files by absolute path and this one tells
 * agents its root is `/` (list_allowed_directories), so a leading `/` names
 * the cap's root: `/notes/a.md` is `notes/a.md`. Exactly one is taken off;
 * what remains goes to the cap's parser, so `//etc` is still an absolute
 * path and `/../x` still escapes.
 */
export function capPath(raw: string): string {
  return raw.startsWith("/") ? raw.slice(1) : raw;
}

/** A directory as tools join names onto it: {@link capPath}, without the one trailing `/` the parser would ignore. */
export function capDir(raw: string): string {
  const path = capPath(raw);
  const dir = path.endsWith("/") ? path.slice(0, -1) : path;
  // The walk hands this to the rooted files, which take one `/` off again: a
  // dir that still starts with `/` (`//etc` given) gets it back, so the
  // parser sees the absolute path the caller wrote, as read_file does.
  return dir.startsWith("/") ? `/${dir}` : dir;
}

/** `files` with every path taken through {@link capPath}. */
export function rootedFiles(files: CapFiles): CapFiles {
  return {
    readText: (path, maxBytes) => files.readText(capPath(path), maxBytes),
    writeText: (path, text, options) => files.writeText(capPath(path), text, options),
    stat: (path) => files.stat(capPath(path)),
    list: (path, maxEntries, depth) => files.list(capPath(path), maxEntries, depth),
    delete: (path) => files.delete(capPath(path)),
    move: (from, to) => files.move(capPath(from), capPath(to)),
    readBytes: (path, maxBytes) => files.readBytes(capPath(path), maxBytes),
    checkFolder: (path) => files.checkFolder(capPath(path)),
  };
}
