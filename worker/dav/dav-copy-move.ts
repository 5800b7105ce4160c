/**
 * WebDAV's COPY and MOVE: a file, or a folder entry by entry (bounded, not
 * atomic), its dead properties carried along; a destination replaced only
 * with Overwrite, and never one that holds the source.
 */
import { pathWithin } from "../../durable-objects/cap-dav-locks.ts";
import { refusal, refuse } from "../../shared/refusals.ts";
import { ok, type Result } from "../../shared/result.ts";
import { readThroughCap } from "../cap-read.ts";
import { transferTree, walkTree } from "../folder-tree.ts";
import { lockGate } from "./dav-locking.ts";
import { type DavRequest, davError, parentExists } from "./dav-methods.ts";
import { destinationPath, parseDepth, parseOverwrite } from "./dav-request.ts";
import { DAV_BOUND, removeDavTree } from "./dav-write.ts";

export async function davCopyMove(req: DavRequest, move: boolean): Promise<Response> {
  const c = req.c;
  const origin = c.env.CAPVAULT_PUBLIC_URL?.replace(/\/+$/, "") ?? null;
  const dest = destinationPath(c.req.header("destination"), c.req.url, req.mount, origin);
  if (!dest.ok) return davError(req, dest.error);
  const overwrite = parseOverwrite(c.req.header("overwrite"));
  if (!overwrite.ok) return davError(req, overwrite.error);
  const to = dest.value.path;
  const from = req.path;
  if (from === "" || to === "" || pathWithin(to, from)) return davError(req, refusal("davSameResource"));
  // Overwriting a folder the source lies in would delete the source before it is copied: refused, nothing touched.
  if (pathWithin(from, to)) return davError(req, refusal("davDestinationHoldsSource"));
  const src = await req.cap.statPath(from);
  if (!src.ok) return davError(req, src.error);
  const isDir = src.value.type === "dir";
  const depth = parseDepth(c.req.header("depth"), "infinity", move && isDir ? ["infinity"] : ["0", "infinity"]);
  if (!depth.ok) return davError(req, depth.error);
  const parent = await parentExists(req, to);
  if (!parent.ok) return davError(req, parent.error);
  const existing = await req.cap.statPath(to);
  if (!existing.ok && existing.error.code !== "not_found") return davError(req, existing.error);
  const existed = existing.ok;
  if (existed && !overwrite.value) return davError(req, refusal("destinationExists"), 412);
  const gate = await lockGate(req, move ? [from, to] : [to], move ? [from, to] : [to]);
  if (gate) return gate;
  if (existed) {
    const cleared = existing.value.type === "dir" ? await removeDavTree(req, to) : await req.cap.deleteFile(to);
    if (!cleared.ok) return davError(req, cleared.error);
    await req.cap.davDropLocks(to);
    await req.cap.davDropProps(to);
  }
  // Dead properties go with the resource (RFC 4918 §9.8.2, §9.9.1); a copy past the cap's bounds is refused before any file.
  const props = move ? ok(null) : await req.cap.davCarryProps(from, to, false, depth.value !== "0");
  // Past the cap's bounds of dead properties (its only too_large): 507 Insufficient Storage, RFC 4918 §11.5.
  if (!props.ok) return davError(req, props.error, props.error.code === "too_large" ? 507 : undefined);
  const done = isDir ? await copyTree(req, from, to, move, depth.value === "0") : await copyOne(req, from, to, move);
  if (!done.ok) {
    if (!move) await req.cap.davDropProps(to);
    return davError(req, done.error);
  }
  if (move) {
    await req.cap.davDropLocks(from);
    await req.cap.davCarryProps(from, to, true, true);
  }
  return new Response(null, { status: existed ? 204 : 201 });
}

async function copyOne(req: DavRequest, from: string, to: string, move: boolean): Promise<Result<null>> {
  return move ? req.cap.movePath(from, to, true) : copyFile(req, from, to);
}

/** A folder copied or moved entry by entry, bounded by {@link DAV_BOUND}: not atomic, and said so in the docs. */
async function copyTree(
  req: DavRequest,
  from: string,
  to: string,
  move: boolean,
  shallow: boolean,
): Promise<Result<null>> {
  if (shallow) return req.cap.makeFolder(to);
  const tree = await walkTree(req.cap, from, DAV_BOUND);
  if (!tree.ok) return tree;
  const done = await transferTree(req.cap, tree.value, from, to, move, (source, destination) =>
    copyOne(req, source, destination, move),
  );
  return done.ok ? ok(null) : done;
}

async function copyFile(req: DavRequest, from: string, to: string): Promise<Result<null>> {
  const read = await readThroughCap(req.cap, req.c.env, from, {});
  if (!read.ok) return read;
  if (read.value.status !== "body") return refuse("unavailable");
  const { meta, body } = read.value;
  const written = await req.cap.writeFile(to, body, { length: meta.size, contentType: meta.contentType });
  return written.ok ? ok(null) : written;
}
