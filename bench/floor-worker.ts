/**
 * The R2 floor: the least a worker can do to serve a file from the bucket.
 * Same runtime and the same bucket files as the vault, but no token, no
 * Durable Object, no path rules: `?key=K` is the R2 key itself. GET returns
 * the body, PUT stores it, HEAD stats it, `?list=P` lists one level;
 * `/const` answers a constant (what Miniflare's own entry costs).
 * Bench only: it listens on loopback and holds no secret.
 */
interface FloorEnv {
  BUCKET: R2Bucket;
}

export default {
  async fetch(request: Request, env: FloorEnv): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/const") return new Response("ok");
    const key = url.searchParams.get("key") ?? "";
    const list = url.searchParams.get("list");
    if (list !== null) {
      const page = await env.BUCKET.list({ prefix: list, delimiter: "/", limit: 1000 });
      return Response.json({ entries: page.objects.length + page.delimitedPrefixes.length });
    }
    if (request.method === "GET") {
      const object = await env.BUCKET.get(key);
      return object
        ? new Response(object.body, { headers: { etag: object.httpEtag } })
        : new Response(null, { status: 404 });
    }
    if (request.method === "HEAD") {
      const object = await env.BUCKET.head(key);
      return new Response(null, { status: object ? 200 : 404 });
    }
    if (request.method === "PUT" && request.body) {
      const stored = await env.BUCKET.put(key, request.body);
      return Response.json({ size: stored?.size, etag: stored?.etag }, { status: 201 });
    }
    return new Response(null, { status: 405 });
  },
};
