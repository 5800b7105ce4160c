import { refuse } from "../shared/refusals.ts";
import { parseRelPath, type RelPath, storageKey } from "../shared/rel-path.ts";
import { ok, type Result } from "../shared/result.ts";
import type { Stat, WriteResult } from "../shared/wire-types.ts";
import {
  DISK_SECRET_HEADER,
  type DiskAnswers,
  type DiskCall,
  type DiskOp,
  decodeReadMeta,
  decodeResult,
  encodeCallHead,
  READ_META_HEADER,
} from "./disk-protocol.ts";
import type {
  ReadOutcome,
  Root,
  StorageAdapter,
  StorageListPage,
  StorageReadOptions,
  StorageWriteOptions,
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
 * The key-length checks mirror the R2 adapter so both refuse the same paths.
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

  async read(root: Root, path: RelPath, options: StorageReadOptions): Promise<Result<ReadOutcome>> {
    const key = fileKey(root, path);
    if (!key.ok) return key;
    const response = await this.send({
      op: "read",
      root: [...root],
      path: [...path.segments],
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
    root: Root,
    path: RelPath,
    body: ReadableStream<Uint8Array>,
    options: StorageWriteOptions,
  ): Promise<Result<WriteResult>> {
    const key = fileKey(root, path);
    if (!key.ok) {
      await body.cancel().catch(() => undefined);
      return key;
    }
    const call: DiskCall = {
      op: "write",
      root: [...root],
      path: [...path.segments],
      length: options.length,
      contentType: options.contentType,
      ifMatch: options.ifMatch ?? null,
      ifNoneMatch: options.ifNoneMatch ?? null,
    };
    // Timed here too, so a client too slow for the worker hears why; the
    // host's own (looser) limits are the backstop that frees its descriptors.
    const timed = timedBody(body, options.length, this.uploads);
    const response = await this.send(call, timed.body);
    const result = response ? await answer<"write">(response) : refuse("unavailable");
    return !result.ok && timed.timedOut() ? refuse("tooSlow") : result;
  }

  async remove(root: Root, path: RelPath): Promise<Result<null>> {
    const key = fileKey(root, path);
    if (!key.ok) return key;
    return this.ask<"remove">({ op: "remove", root: [...root], path: [...path.segments] });
  }

  async stat(root: Root, path: RelPath): Promise<Result<Stat>> {
    // The root itself needs no key, but it still goes to the host: only the
    // host can tell whether the root resolves outside its parent's reach.
    if (path.segments.length > 0) {
      const key = fileKey(root, path);
      if (!key.ok) return key;
    }
    return this.ask<"stat">({ op: "stat", root: [...root], path: [...path.segments] });
  }

  async list(
    root: Root,
    path: RelPath,
    options: { after: string | null; limit: number },
  ): Promise<Result<StorageListPage>> {
    const key = storageKey(root.join(""), path, "dir");
    if (!key.ok) return key;
    return this.ask<"list">({
      op: "list",
      root: [...root],
      path: [...path.segments],
      after: options.after,
      limit: options.limit,
    });
  }

  async move(root: Root, from: RelPath, to: RelPath, overwrite: boolean): Promise<Result<null>> {
    const src = fileKey(root, from);
    if (!src.ok) return src;
    const dst = fileKey(root, to);
    if (!dst.ok) return dst;
    return this.ask<"move">({ op: "move", root: [...root], from: [...from.segments], to: [...to.segments], overwrite });
  }

  async prepareRoot(root: Root, options: { create: boolean }): Promise<Result<null>> {
    const prefix = root.join("");
    if (prefix !== "") {
      const asPath = parseRelPath(prefix);
      if (!asPath.ok) return asPath;
    }
    return this.ask<"prepareRoot">({ op: "prepareRoot", root: [...root], create: options.create });
  }

  private async ask<K extends DiskOp>(call: DiskCall & { op: K }): Promise<Result<DiskAnswers[K]>> {
    const response = await this.send(call);
    return response ? answer<K>(response) : refuse("unavailable");
  }

  /** `null` when the host could not be reached or answered outside the protocol. */
  private async send(call: DiskCall, content?: ReadableStream<Uint8Array>): Promise<Response | null> {
    const head = encodeCallHead(call);
    const body = content ? prepend(head, content) : head;
    const init = { method: "POST", body, duplex: "half", headers: { [DISK_SECRET_HEADER]: this.secret } };
    try {
      const response = await this.disk.fetch(new Request(`http://capvault-disk/${call.op}`, init as RequestInit));
      if (response.status === 200) return response;
      await response.body?.cancel().catch(() => undefined);
      return null;
    } catch {
      if (body instanceof ReadableStream) await body.cancel().catch(() => undefined);
      return null;
    }
  }
}

async function answer<K extends DiskOp>(response: Response): Promise<Result<DiskAnswers[K]>> {
  try {
    return decodeResult<DiskAnswers[K]>(await response.json()) ?? refuse("unavailable");
  } catch {
    return refuse("unavailable");
  }
}

function fileKey(root: Root, path: RelPath): Result<string> {
  if (path.segments.length === 0) return refuse("needsFileName");
  return storageKey(root.join(""), path, "file");
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
