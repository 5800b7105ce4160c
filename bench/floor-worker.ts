/**
 * The R2 floor: the least a worker can do to serve a file from the bucket.
 * Same runtime and the same bucket files as the vault, but no token, no
 * path rules: `?key=K` is the R2 key itself. GET returns the body, PUT
 * stores it, HEAD stats it, `?list=P` lists one level; `/const` answers a
 * constant (what Miniflare's own entry costs).
 *
 * The other routes each pay one cost the vault's design pays, and no more,
 * so a row against them shows what that design cannot beat here (the
 * objects are in bench/floor-object.ts):
 * - `PUT ?key=K&commits=1`: one object hop that puts the file, then a row
 *   committed in a second object (the root's journal) and one in its own
 *   (the cap's audit line), each a SQLite commit as the vault's are.
 * - `GET ?key=K&hop=1`: a read as the vault splits it (worker/cap-read.ts):
 *   the worker asks the one object (its state row read) for a grant over
 *   RPC, then gets the object from R2 itself and streams it back.
 * - `PUT ?key=K&commits=1&checks=1[&version=1]`: the write as the cap's
 *   object makes it, over RPC with the body as a stream: the R2 calls before
 *   the put (bench/floor-r2-checks.ts), the body
 *   hashed and put with its hash, with `version` the version blob's put
 *   beside it, then the same two commits.
 * - `PUT ?key=K&staged=1`: a large write as the vault makes it while it keeps
 *   versions: over RPC to the object, hashed, streamed into a version blob,
 *   then copied from there to the key with its hash (two writes and a read
 *   of the bytes on the runtime's one thread).
 * - `GET ?disk=P&hop=1`: the grant, then the file fetched from the Node
 *   process over the unix socket (`DISK`, an external service as the
 *   launcher binds the disk host) and streamed back.
 * - `PUT ?disk=P&commits=1`: the object hop, the body sent from the object
 *   over the socket to a durable write (temp, fsync, rename, fsync of the
 *   folder), then the same two commits.
 * None has quotas, versions on disk, revocation or a token.
 * Bench only: it listens on loopback and holds no secret.
 */
import { capObject, type FloorEnv } from "./floor-object.ts";

export { FloorObject } from "./floor-object.ts";

export default {
  async fetch(request: Request, env: FloorEnv): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/const") return new Response("ok");
    const q = url.searchParams;
    const disk = q.get("disk");
    if (disk !== null) return diskRoute(request, env, disk, q);
    const key = q.get("key") ?? "";
    const list = q.get("list");
    if (list !== null) {
      const page = await env.BUCKET.list({ prefix: list, delimiter: "/", limit: 1000 });
      return Response.json({ entries: page.objects.length + page.delimitedPrefixes.length });
    }
    if (request.method === "GET") {
      if (q.has("hop") && !(await capObject(env).grant(key))) return new Response(null, { status: 403 });
      const object = await env.BUCKET.get(key);
      return object
        ? new Response(object.body, { headers: { etag: object.httpEtag } })
        : new Response(null, { status: 404 });
    }
    if (request.method === "HEAD") {
      const object = await env.BUCKET.head(key);
      return new Response(null, { status: object ? 200 : 404 });
    }
    const length = Number(request.headers.get("content-length"));
    if (request.method === "PUT" && request.body && q.has("staged") && Number.isSafeInteger(length))
      return Response.json(await capObject(env).writeStaged(key, request.body, length), { status: 201 });
    if (request.method === "PUT" && request.body && q.has("commits") && q.get("checks") === "1") {
      const stored = await capObject(env).writeR2(key, request.body, q.has("version"));
      return Response.json(stored, { status: 201 });
    }
    if (request.method === "PUT" && request.body && q.has("commits"))
      return capObject(env).fetch(`https://floor/?role=cap&key=${encodeURIComponent(key)}`, {
        method: "PUT",
        body: await request.arrayBuffer(),
      });
    if (request.method === "PUT" && request.body) {
      const stored = await env.BUCKET.put(key, request.body);
      return Response.json({ size: stored?.size, etag: stored?.etag }, { status: 201 });
    }
    return new Response(null, { status: 405 });
  },
};

async function diskRoute(request: Request, env: FloorEnv, path: string, q: URLSearchParams): Promise<Response> {
  if (!env.DISK) return new Response(null, { status: 501 });
  if (request.method === "GET" && q.has("hop")) {
    if (!(await capObject(env).grant(path))) return new Response(null, { status: 403 });
    const file = await env.DISK.fetch(`http://disk/file?path=${encodeURIComponent(path)}`);
    return new Response(file.body, { status: file.status });
  }
  if (request.method === "PUT" && request.body && q.has("commits"))
    return new Response(null, { status: await capObject(env).writeDisk(path, request.body) });
  return new Response(null, { status: 405 });
}
