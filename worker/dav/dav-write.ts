/**
 * WebDAV's writes in place: PUT (a file, its parent folder required), DELETE
 * (a file, or a folder with everything below it, bounded) and MKCOL. Each
 * passes the lock gate first.
 */
import { refusal } from "../../shared/refusals.ts";
import { ok, type Result } from "../../shared/result.ts";
import { removeTree, type TreeBound, walkTree } from "../folder-tree.ts";
import { declaredLength } from "../settle-unread-body.ts";
import { lockGate } from "./dav-locking.ts";
import { DAV_TREE_LIMIT, type DavRequest, davError, parentExists } from "./dav-methods.ts";

export const DAV_BOUND: TreeBound = {
  limit: DAV_TREE_LIMIT,
  tooLarge: refusal("davTreeTooLarge", { limit: DAV_TREE_LIMIT }),
};

/** Deletes a folder and everything below it, bounded by {@link DAV_BOUND}; the cap's root itself is never removed. */
export async function removeDavTree(req: DavRequest, root: string): Promise<Result<null>> {
  const tree = await walkTree(req.cap, root, DAV_BOUND);
  if (!tree.ok) return tree;
  const gone = await removeTree(req.cap, tree.value);
  return gone.ok ? ok(null) : gone;
}

export async function davPut(req: DavRequest): Promise<Response> {
  const c = req.c;
  // Finder sends its bodies chunked, naming their length in X-Expected-Entity-Length.
  const length =
    declaredLength(c.req.header("content-length")) ?? declaredLength(c.req.header("x-expected-entity-length"));
  if (length === null) return davError(req, refusal("lengthRequired"));
  if (req.path === "" || req.collection) return davError(req, refusal("needsFileName"));
  const parent = await parentExists(req, req.path);
  if (!parent.ok) return davError(req, parent.error);
  const gate = await lockGate(req, [req.path], []);
  if (gate) return gate;
  const result = await req.cap.writeFile(req.path, c.req.raw.body ?? new Response("").body!, {
    length,
    contentType: c.req.header("content-type") ?? null,
    ifMatch: c.req.header("if-match"),
    ifNoneMatch: c.req.header("if-none-match"),
  });
  if (!result.ok) return davError(req, result.error);
  return new Response(null, { status: result.value.created ? 201 : 204, headers: { ETag: `"${result.value.etag}"` } });
}

export async function davDelete(req: DavRequest): Promise<Response> {
  if (req.path === "") return davError(req, refusal("davSameResource"), 403);
  const stat = await req.cap.statPath(req.path);
  if (!stat.ok) return davError(req, stat.error);
  const isDir = stat.value.type === "dir";
  const gate = await lockGate(req, [req.path], isDir ? [req.path] : []);
  if (gate) return gate;
  const gone = isDir ? await removeDavTree(req, req.path) : await req.cap.deleteFile(req.path);
  if (!gone.ok) return davError(req, gone.error);
  await req.cap.davDropLocks(req.path);
  await req.cap.davDropProps(req.path);
  return new Response(null, { status: 204 });
}

export async function davMkcol(req: DavRequest): Promise<Response> {
  const c = req.c;
  const length = declaredLength(c.req.header("content-length"));
  if ((length !== null && length > 0) || c.req.header("transfer-encoding") !== undefined)
    return davError(req, refusal("davMkcolBody"));
  if (req.path === "") return davError(req, refusal("davExists"));
  const stat = await req.cap.statPath(req.path);
  if (stat.ok) return davError(req, refusal("davExists"));
  if (stat.error.code !== "not_found" && stat.error.code !== "forbidden") return davError(req, stat.error);
  const parent = await parentExists(req, req.path);
  if (!parent.ok) return davError(req, parent.error);
  const gate = await lockGate(req, [req.path], []);
  if (gate) return gate;
  const made = await req.cap.makeFolder(req.path);
  return made.ok ? new Response(null, { status: 201 }) : davError(req, made.error);
}
