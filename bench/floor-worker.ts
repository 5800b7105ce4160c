/**
 * The R2 floor: the least a worker can do to serve a file from the bucket.
 * Same runtime and the same bucket files as the vault, but no token, no
 * Durable Object, no path rules: `?key=K` is the R2 key itself. GET returns
 * the body, PUT stores it, HEAD stats it, `?list=P` lists one level;
 * `/const` answers a constant (what Miniflare's own entry costs).
 * `PUT ...&commits=1` is the write floor that pays the vault's durable
 * places: one object hop that puts the file, then a row committed in a second
 * object (the root's journal) and one in its own (the cap's audit line), each
 * a SQLite commit as the vault's are. It has no path rules, quotas, versions
 * or token: what a design with one object hop and the same three commits
 * cannot beat.
 * Bench only: it listens on loopback and holds no secret.
 */
interface FloorEnv {
  BUCKET: R2Bucket;
  OBJECTS: DurableObjectNamespace;
}

/** A SQLite-backed object: `role=cap` stores and commits, `role=journal` only commits a row. */
export class FloorObject {
  constructor(
    private readonly state: DurableObjectState,
    private readonly env: FloorEnv,
  ) {
    state.storage.sql.exec("CREATE TABLE IF NOT EXISTS line (id INTEGER PRIMARY KEY, text TEXT NOT NULL)");
  }

  async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const key = url.searchParams.get("key") ?? "";
    if (url.searchParams.get("role") === "journal") {
      this.state.storage.sql.exec("INSERT INTO line (text) VALUES (?)", `write ${key}`);
      return new Response(null, { status: 204 });
    }
    // Read whole, as the vault reads a small body before its one put.
    const stored = await this.env.BUCKET.put(key, await request.arrayBuffer());
    const journal = this.env.OBJECTS.get(this.env.OBJECTS.idFromName("journal"));
    await journal.fetch(`https://floor/?role=journal&key=${encodeURIComponent(key)}`, { method: "POST" });
    this.state.storage.sql.exec("INSERT INTO line (text) VALUES (?)", `audit write ${key}`);
    return Response.json({ size: stored?.size, etag: stored?.etag }, { status: 201 });
  }
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
    if (request.method === "PUT" && request.body && url.searchParams.has("commits")) {
      const cap = env.OBJECTS.get(env.OBJECTS.idFromName("cap"));
      return cap.fetch(`https://floor/?role=cap&key=${encodeURIComponent(key)}`, {
        method: "PUT",
        body: await request.arrayBuffer(),
      });
    }
    if (request.method === "PUT" && request.body) {
      const stored = await env.BUCKET.put(key, request.body);
      return Response.json({ size: stored?.size, etag: stored?.etag }, { status: 201 });
    }
    return new Response(null, { status: 405 });
  },
};
