import { refuse } from "../shared/refusals.ts";
import { ok, type Result } from "../shared/result.ts";
import type { Stat } from "../shared/wire-types.ts";
import type { CheckedDir, CheckedEntry, CheckedFile, CheckedRoot } from "./checked-path.ts";
import { copyChunks } from "./copy-chunks.ts";
import {
  DISK_SECRET_HEADER,
  type DiskAnswers,
  type DiskCall,
  type DiskOp,
  decodeReadMeta,
  decodeResult,
  encodeCallHead,
  READ_META_HEADER,
  VERSION_SIZE_HEADER,
} from "./disk-protocol.ts";
import type {
  ReadOutcome,
  StorageAdapter,
  StorageListOptions,
  StorageListPage,
  StorageReadOptions,
  StorageWriteOptions,
  StoredWrite,
  VersionBytes,
} from "./storage-adapter.ts";
import { timedBody, UPLOAD_LIMITS, type UploadLimits } from "./upload-limits.ts";

/** The `DISK` service binding: the Node disk host, reached with plain fetches. */
export interface DiskFetcher {
  fetch(request: Request): Promise<Response>;
}

/**
 * The disk backend as seen from inside workerd. It decides nothing about the
 * filesystem: every call goes to the Node disk host (see `disk-host/index.ts`),
 * which resolves the root and path beneath its base folder without ever
 * following a link out of the cap's root. Bodies stream both ways.
 *
 * Paths arrive checked by the cap object (see checked-path.ts); the host
 * still judges every name again, behind its process boundary.
 *
 * @example
 * const storage = new DiskStorage(env.DISK, env.CAPVAULT_DISK_SECRET);
 * const page = await storage.list(["notes/"], parsedPath, { after: null, limit: 100 });
 */
export class DiskStorage implements StorageAdapter {
  constructor(
    private readonly disk: DiskFetcher,
    private readonly secret: string,
    private readonly uploads: UploadLimits = UPLOAD_LIMITS,
  ) {}

  async read(at: CheckedFile, options: StorageReadOptions): Promise<Result<ReadOutcome>> {
    const response = await this.send({
      op: "read",
      root: [...at.root],
      path: [...at.path.segments],
      range: options.range ?? null,
      ifNoneMatch: options.ifNoneMatch ?? null,
    });
    if (!response) return refuse("unavailable");
    const head = response.headers.get(READ_META_HEADER);
    if (head === null) return answer<"read">(response);
    const decoded = decodeReadMeta(head);
    if (!decoded || !response.body) {
      await response.body?.cancel().catch(() => undefined);
      return refuse("unavailable");
    }
    return ok({ status: "body", meta: decoded.meta, range: decoded.range, body: response.body });
  }

  async write(
    at: CheckedFile,
    body: ReadableStream<Uint8Array>,
    options: StorageWriteOptions,
  ): Promise<Result<StoredWrite>> {
    const call: DiskCall = {
      op: "write",
      root: [...at.root],
      path: [...at.path.segments],
      length: options.length,
      contentType: options.contentType,
      ifMatch: options.ifMatch ?? null,
      ifNoneMatch: options.ifNoneMatch ?? null,
      keepAs: options.keepAs ?? null,
    };
    // Timed here too, so a client too slow for the worker hears why; the
    // host's own (looser) limits are the backstop that frees its descriptors.
    const timed = timedBody(body, options.length, this.uploads);
    // Once answered the host reads no more: a body it refused early is cancelled, not left waiting.
    const answered = new AbortController();
    const response = await this.send(call, timed.body, answered.signal);
    const result = response ? await answer<"write">(response) : refuse("unavailable");
    answered.abort();
    return !result.ok && timed.timedOut() ? refuse("tooSlow") : result;
  }

  async remove(at: CheckedFile): Promise<Result<null>> {
    return this.ask<"remove">({ op: "remove", root: [...at.root], path: [...at.path.segments] });
  }

  async makeDir(at: CheckedRoot): Promise<Result<null>> {
    if (at.path.segments.length === 0) return refuse("needsFolderName");
    // A folder's root levels are the cap's levels and the folder's path as one more (path-check.ts).
    return this.ask<"makeDir">({ op: "makeDir", root: at.root.slice(0, -1), path: [...at.path.segments] });
  }

  async removeDir(at: CheckedRoot): Promise<Result<null>> {
    if (at.path.segments.length === 0) return refuse("needsFolderName");
    return this.ask<"removeDir">({ op: "removeDir", root: at.root.slice(0, -1), path: [...at.path.segments] });
  }

  async stat(at: CheckedEntry): Promise<Result<Stat>> {
    // The root itself goes to the host too: only the host can tell whether
    // the root resolves outside its parent's reach.
    return this.ask<"stat">({ op: "stat", root: [...at.root], path: [...at.path.segments] });
  }

  async list(at: CheckedDir, options: StorageListOptions): Promise<Result<StorageListPage>> {
    return this.ask<"list">({
      op: "list",
      root: [...at.root],
      path: [...at.path.segments],
      after: options.after,
      limit: options.limit,
      depth: options.depth ?? 1,
    });
  }

  async move(from: CheckedFile, to: CheckedFile, overwrite: boolean): Promise<Result<null>> {
    return this.ask<"move">({
      op: "move",
      root: [...from.root],
      from: [...from.path.segments],
      to: [...to.path.segments],
      overwrite,
    });
  }

  async prepareRoot(root: CheckedRoot, options: { create: boolean }): Promise<Result<null>> {
    return this.ask<"prepareRoot">({ op: "prepareRoot", root: [...root.root], create: options.create });
  }

  async readVersion(blob: string): Promise<Result<VersionBytes>> {
    const response = await this.send({ op: "readVersion", root: [], blob });
    if (!response) return refuse("unavailable");
    const size = Number(response.headers.get(VERSION_SIZE_HEADER));
    if (!response.headers.has(VERSION_SIZE_HEADER)) return answer<"readVersion">(response);
    if (!Number.isSafeInteger(size) || size < 0 || !response.body) {
      await response.body?.cancel().catch(() => undefined);
      return refuse("unavailable");
    }
    return ok({ size, body: response.body });
  }

  async dropVersion(blob: string): Promise<Result<null>> {
    return this.ask<"dropVersion">({ op: "dropVersion", root: [], blob });
  }

  private async ask<K extends DiskOp>(call: DiskCall & { op: K }): Promise<Result<DiskAnswers[K]>> {
    const response = await this.send(call);
    return response ? answer<K>(response) : refuse("unavailable");
  }

  /**
   * `null` when the host could not be reached or answered outside the
   * protocol. In workerd, content goes through the runtime's own pipe,
   * written by copyChunks: its write resolves once the fetch has taken the
   * bytes, so an upload's buffers can be reused (see recycleChunk); a stream
   * built in JavaScript is read by the runtime without saying when a chunk
   * is done with. Node, where the disk tests run this adapter too, has no
   * such pipe (nor chunks to reuse) and sends the stream as it is. `stop`
   * ends the copy and cancels `content` (in workerd; in Node the fetch owns
   * the stream).
   *
   * The host commits a write once it has every declared byte and the
   * stream's end. copyChunks gives the pipe a body's last chunk only once the
   * body has ended cleanly, so a body failing at its very end (the cap object
   * errors one completing past expiry) never reaches the host whole. In Node
   * the host reads the stream itself and sees its failure.
   */
  private async send(
    call: DiskCall,
    content?: ReadableStream<Uint8Array>,
    stop?: AbortSignal,
  ): Promise<Response | null> {
    const head = encodeCallHead(call);
    let body: Uint8Array | ReadableStream<Uint8Array> = head;
    let copying: Promise<boolean> | null = null;
    const failed = new AbortController();
    if (content && typeof IdentityTransformStream === "function") {
      const pipe = new IdentityTransformStream();
      body = pipe.readable;
      const signal = stop ? AbortSignal.any([stop, failed.signal]) : failed.signal;
      copying = copyChunks(prepend(head, content), [pipe.writable], { signal });
    } else if (content) body = prepend(head, content);
    const init = { method: "POST", body, duplex: "half", headers: { [DISK_SECRET_HEADER]: this.secret } };
    try {
      const response = await this.disk.fetch(new Request(`http://capvault-disk/${call.op}`, init as RequestInit));
      if (response.status === 200) return response;
      await response.body?.cancel().catch(() => undefined);
    } catch {
      // Nothing of the body is wanted now.
      if (!copying && body instanceof ReadableStream) await body.cancel().catch(() => undefined);
    }
    failed.abort();
    await copying;
    return null;
  }
}

async function answer<K extends DiskOp>(response: Response): Promise<Result<DiskAnswers[K]>> {
  try {
    return decodeResult<DiskAnswers[K]>(await response.json()) ?? refuse("unavailable");
  } catch {
    return refuse("unavailable");
  }
}

/** The frame head, then the content as it arrives: the file is never held whole. */
function prepend(head: Uint8Array, content: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  const reader = content.getReader();
  let headSent = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (!headSent) {
        headSent = true;
        return controller.enqueue(head);
      }
      const { value, done } = await reader.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
}
