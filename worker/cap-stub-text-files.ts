import type { CapObject } from "../durable-objects/cap-object.ts";
import type { DirEntry, MemoryFiles } from "../memory-tool/text-files.ts";
import { collectPages, readTextBody, TEXT_CONTENT_TYPE, tooLarge, utf8Bytes } from "../memory-tool/text-files.ts";
import { refuse } from "../shared/refusals.ts";
import { ok, type Result } from "../shared/result.ts";
import { slicedBody } from "../shared/sliced-body.ts";
import type { Stat, WriteResult } from "../shared/wire-types.ts";
import { readThroughCap } from "./cap-read.ts";
import type { Env } from "./env.ts";

const PAGE = "1000";
/** Pages of one recursive listing: each walks at most 4,000 storage entries (storage-adapters/tree-page.ts). */
const TREE_MAX_PAGES = 8;

/**
 * {@link MemoryFiles} over a cap's Durable Object, for code running inside the
 * worker. Every call is an RPC on the cap's object, so liveness, rights and
 * the path are decided there, exactly as for the HTTP routes.
 *
 * @example
 * const files = capStubTextFiles(await capStub(c, token), c.env);
 * const handle = createMemoryHandler(files);
 */
export function capStubTextFiles(cap: DurableObjectStub<CapObject>, env?: Env): MemoryFiles {
  return {
    async readText(path, maxBytes) {
      await yieldToNetwork();
      const read = await wholeRead(cap, env, path);
      if (!read.ok) return read;
      const outcome = read.value;
      if (outcome.status !== "body") return refuse("unavailable");
      if (outcome.meta.size > maxBytes) {
        await outcome.body.cancel().catch(() => undefined);
        return tooLarge(maxBytes);
      }
      const text = await readTextBody(outcome.body, maxBytes);
      return text.ok ? ok({ text: text.value, etag: outcome.meta.etag }) : text;
    },

    async writeText(path, text, options = {}) {
      await yieldToNetwork();
      const bytes = utf8Bytes(text);
      const body = slicedBody(bytes);
      const written = (await cap.writeFile(path, body, {
        length: bytes.byteLength,
        contentType: TEXT_CONTENT_TYPE,
        ifMatch: options.ifMatch === undefined ? undefined : `"${options.ifMatch}"`,
        ifNoneMatch: options.ifNoneMatch,
      })) as Result<WriteResult>;
      return written.ok
        ? ok({
            created: written.value.created,
            size: written.value.size,
            etag: written.value.etag,
            sha256: written.value.sha256,
          })
        : written;
    },

    async stat(path) {
      await yieldToNetwork();
      const stat = (await cap.statPath(path)) as Result<Stat>;
      if (!stat.ok) return stat;
      const s = stat.value;
      return ok(
        s.type === "dir"
          ? { type: "dir" }
          : { type: "file", size: s.size, etag: s.etag, modified: s.modified, contentType: s.contentType },
      );
    },

    async list(path, maxEntries, depth = 1) {
      const rawDepth = depth === 1 ? null : String(depth);
      return collectPages(
        async (cursor) => {
          await yieldToNetwork();
          return (await cap.listDir(path, cursor, PAGE, rawDepth)) as Result<{
            entries: DirEntry[];
            cursor: string | null;
          }>;
        },
        maxEntries,
        depth === 1 ? Number.POSITIVE_INFINITY : TREE_MAX_PAGES,
      );
    },

    async delete(path) {
      await yieldToNetwork();
      return (await cap.deleteFile(path)) as Result<null>;
    },

    async move(from, to) {
      await yieldToNetwork();
      return (await cap.movePath(from, to, false)) as Result<null>;
    },

    async makeFolder(path) {
      await yieldToNetwork();
      return (await cap.makeFolder(path)) as Result<null>;
    },

    async removeFolder(path) {
      await yieldToNetwork();
      return (await cap.removeFolder(path)) as Result<null>;
    },
  };
}

/**
 * A whole file read through the cap. With `env`, as `GET /file` reads
 * (worker/cap-read.ts): the object decides and grants, the worker reads
 * storage, so the bytes skip a stream across the object's RPC.
 */
export async function wholeRead(
  cap: DurableObjectStub<CapObject>,
  env: Env | undefined,
  path: string | null,
): Promise<Result<ReadShape>> {
  const whole = { range: null, ifNoneMatch: null };
  return env ? readThroughCap(cap, env, path, whole) : ((await cap.readFile(path, whole)) as Result<ReadShape>);
}

/**
 * Lets the runtime poll the network before the next storage call. A request
 * whose calls to Durable Objects and storage all stay inside the process
 * always has an event ready, and the runtime only accepts new connections
 * when none is: a batch of tree walks kept a read on another cap waiting for
 * its whole 5 s. A zero timer empties the queue for a moment.
 */
function yieldToNetwork(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

// RPC stubs wrap return types; these are the plain shapes the object returns.
export type ReadShape =
  | { status: "body"; meta: { size: number; etag: string }; body: ReadableStream<Uint8Array> }
  | { status: "not_modified" | "unsatisfiable"; meta: { size: number; etag: string } };
