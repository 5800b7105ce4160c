import { refuse } from "../shared/refusals.ts";
import type { Result } from "../shared/result.ts";
import {
  type DiskCall,
  decodeCall,
  encodeReadMeta,
  READ_META_HEADER,
  splitFrame,
  splitWholeFrame,
  VERSION_SIZE_HEADER,
} from "../storage-adapters/disk-protocol.ts";
import type { ReadOutcome, VersionBytes } from "../storage-adapters/storage-adapter.ts";
import { type BodyBound, bodyBound, drain, writeFile } from "./atomic-write.ts";
import { checkedLevels, checkedSegments } from "./checked-paths.ts";
import { listPath, moveFile, prepareRoot, readFile, removeFile, statPath } from "./disk-ops.ts";
import { makeFolder, removeFolder } from "./folder-ops.ts";
import { logUnexpected } from "./fs-errors.ts";
import type { HostContext } from "./host-context.ts";
import { type HostAnswer, type HostRequest, jsonAnswer } from "./host-request.ts";
import { dropVersion, readVersion } from "./version-store.ts";

/**
 * Answers one framed call from DiskStorage (protocol: storage-adapters/disk-protocol.ts).
 * Never throws and never answers with anything but 200 + a Result or a read
 * body: Miniflare would turn a thrown error into a 500 carrying its message,
 * and Node's fs messages carry host paths.
 */
export async function serveCall(ctx: HostContext, request: HostRequest): Promise<HostAnswer> {
  try {
    if (request.method !== "POST" || request.body === null) return json(refuse("malformedDiskCall"));
    const framed = request.body instanceof Uint8Array ? splitWholeFrame(request.body) : await splitFrame(request.body);
    if (!framed) return json(refuse("malformedDiskCall"));
    const call = decodeCall(framed.json);
    // Other calls carry no content; anything there is dropped, as slowly as the bounds of an empty write allow.
    if (call?.op !== "write" && !(framed.rest instanceof Uint8Array))
      await drain(framed.rest.getReader(), boundFor(ctx, 0));
    if (!call) return json(refuse("malformedDiskCall"));
    if (call.op === "write") {
      const content = framed.rest instanceof Uint8Array ? wholeStream(framed.rest) : framed.rest;
      const release = ctx.uploadSlots.take(ctx.uploads.maxConcurrent);
      if (!release) {
        await drain(content.getReader(), boundFor(ctx, call.length));
        return json(refuse("tooManyUploads"));
      }
      try {
        return json(await write(ctx, call, content));
      } finally {
        release();
      }
    }
    if (call.op === "read") return readAnswer(await read(ctx, call));
    if (call.op === "readVersion") return versionAnswer(await readVersion(ctx.versions, call.blob));
    if (call.op === "dropVersion") return json(await dropVersion(ctx, call.blob));
    return json(await dispatch(ctx, call));
  } catch (error) {
    logUnexpected(error);
    return json(refuse("unavailable"));
  }
}

/** A write's content that arrived whole, as the stream the write path reads (a write pays its fsyncs anyway). */
function wholeStream(bytes: Uint8Array): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start(controller) {
      if (bytes.length > 0) controller.enqueue(bytes);
      controller.close();
    },
  });
}

async function write(ctx: HostContext, call: DiskCall & { op: "write" }, body: ReadableStream<Uint8Array>) {
  const levels = checkedLevels(call.root);
  const path = checkedSegments(call.path);
  if (!levels.ok || !path.ok) {
    await drain(body.getReader(), boundFor(ctx, call.length));
    return !levels.ok ? levels : path;
  }
  return writeFile(ctx, levels.value, path.value, body, {
    length: call.length,
    contentType: call.contentType,
    preconditions: { ifMatch: call.ifMatch ?? undefined, ifNoneMatch: call.ifNoneMatch ?? undefined },
    keepAs: call.keepAs ?? null,
  });
}

async function read(ctx: HostContext, call: DiskCall & { op: "read" }): Promise<Result<ReadOutcome>> {
  const levels = checkedLevels(call.root);
  if (!levels.ok) return levels;
  const path = checkedSegments(call.path);
  if (!path.ok) return path;
  return readFile(ctx, levels.value, path.value, { range: call.range, ifNoneMatch: call.ifNoneMatch });
}

async function dispatch(
  ctx: HostContext,
  call: Exclude<DiskCall, { op: "write" | "read" | "readVersion" | "dropVersion" }>,
): Promise<Result<unknown>> {
  const levels = checkedLevels(call.root);
  if (!levels.ok) return levels;
  switch (call.op) {
    case "prepareRoot":
      return prepareRoot(ctx, levels.value, call.create);
    case "move": {
      const from = checkedSegments(call.from);
      if (!from.ok) return from;
      const to = checkedSegments(call.to);
      if (!to.ok) return to;
      return moveFile(ctx, levels.value, from.value, to.value, call.overwrite);
    }
  }
  const path = checkedSegments(call.path);
  if (!path.ok) return path;
  switch (call.op) {
    case "remove":
      return removeFile(ctx, levels.value, path.value);
    case "makeDir":
      return makeFolder(ctx, levels.value, path.value);
    case "removeDir":
      return removeFolder(ctx, levels.value, path.value);
    case "stat":
      return statPath(ctx, levels.value, path.value);
    case "list":
      return listPath(ctx, levels.value, path.value, { after: call.after, limit: call.limit, depth: call.depth });
  }
}

function readAnswer(result: Result<ReadOutcome>): HostAnswer {
  if (!result.ok || result.value.status !== "body") return json(result);
  const { meta, range, body } = result.value;
  return {
    headers: { [READ_META_HEADER]: encodeReadMeta({ meta, range }), "content-type": "application/octet-stream" },
    body,
  };
}

function versionAnswer(result: Result<VersionBytes>): HostAnswer {
  if (!result.ok) return json(result);
  const { size, body } = result.value;
  return { headers: { [VERSION_SIZE_HEADER]: String(size), "content-type": "application/octet-stream" }, body };
}

function boundFor(ctx: HostContext, length: number): BodyBound {
  return bodyBound(length, ctx.uploads);
}

function json(result: Result<unknown>): HostAnswer {
  return jsonAnswer(result);
}
