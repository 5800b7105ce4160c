/**
 * The floor worker's one Durable Object class (bench/floor-worker.ts), SQLite
 * backed as the vault's are, so each row it inserts is a commit on disk.
 * Named `cap` it stands for a cap's object (every request of one cap goes to
 * one object), named `journal` for the root's journal.
 *
 * `fetch` is the older `PUT ?commits=1` hop (a whole buffer over fetch). The
 * methods are the hops the vault makes as it makes them, over RPC: a small
 * answer for a grant, a body as a stream for a write, a journal commit as a
 * call to the second object.
 * Bench only: no token, no path rules, no quotas.
 */
import { DurableObject } from "cloudflare:workers";
import { checkBeforeWrite } from "./floor-r2-checks.ts";

export interface FloorEnv {
  BUCKET: R2Bucket;
  OBJECTS: DurableObjectNamespace<FloorObject>;
  /** The socket disk floor (bench/floor-disk-server.ts over a unix socket), where one is started. */
  DISK?: Fetcher;
}

/** How the `cap` object is reached: one object for every request, as all of one cap's go to its own. */
export function capObject(env: FloorEnv): DurableObjectStub<FloorObject> {
  return env.OBJECTS.get(env.OBJECTS.idFromName("cap"));
}

export class FloorObject extends DurableObject<FloorEnv> {
  constructor(ctx: DurableObjectState, env: FloorEnv) {
    super(ctx, env);
    const sql = ctx.storage.sql;
    sql.exec("CREATE TABLE IF NOT EXISTS line (id INTEGER PRIMARY KEY, text TEXT NOT NULL)");
    // The cap's state row, which the vault's object reads to decide every call.
    sql.exec("CREATE TABLE IF NOT EXISTS state (id INTEGER PRIMARY KEY, rights TEXT NOT NULL, root TEXT NOT NULL)");
    sql.exec("INSERT OR IGNORE INTO state (id, rights, root) VALUES (1, 'read,write', 'default/')");
  }

  override async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const key = url.searchParams.get("key") ?? "";
    if (url.searchParams.get("role") === "journal") {
      this.commit(`write ${key}`);
      return new Response(null, { status: 204 });
    }
    // Read whole, as the vault reads a small body before its one put.
    const stored = await this.env.BUCKET.put(key, await request.arrayBuffer());
    await this.env.OBJECTS.get(this.env.OBJECTS.idFromName("journal")).fetch(
      `https://floor/?role=journal&key=${encodeURIComponent(key)}`,
      { method: "POST" },
    );
    this.commit(`audit write ${key}`);
    return Response.json({ size: stored?.size, etag: stored?.etag }, { status: 201 });
  }

  /** A read's grant: the state row read, the answer the worker needs. No audit line: a read leaves none. */
  grant(name: string): { root: string; name: string } | null {
    const row = this.readState();
    return row.rights.includes("read") ? { root: row.root, name } : null;
  }

  /**
   * An R2 write as the vault's cap object makes it (cap-files.ts `write`,
   * r2-storage.ts, r2-writes.ts): the state row, the calls before the put,
   * the body read whole and hashed, the put with its hash (and, with
   * `version`, the version blob's put beside it), the journal's commit, the
   * audit line.
   */
  async writeR2(
    key: string,
    body: ReadableStream<Uint8Array>,
    version: boolean,
  ): Promise<{ size: number; etag: string; sha256: string }> {
    this.readState();
    await checkBeforeWrite(this.env.BUCKET, key);
    const bytes = new Uint8Array(await new Response(body).arrayBuffer());
    const sha256 = hex(await crypto.subtle.digest("SHA-256", bytes));
    const options = { httpMetadata: { contentType: "application/octet-stream" }, customMetadata: { sha256 } };
    const [stored] = await Promise.all([
      this.env.BUCKET.put(key, bytes, options),
      // Beside the bench's roots (`default/`), never in one, as the vault's blobs are.
      version ? this.env.BUCKET.put(`.floor-versions/${crypto.randomUUID()}`, bytes, options) : null,
    ]);
    await this.journal().commit(`write ${key} ${sha256}`);
    this.commit(`audit write ${key}`);
    return { size: stored.size, etag: stored.etag, sha256 };
  }

  /**
   * A large R2 write as the vault's cap object makes it when it keeps a
   * version (r2-writes.ts `stage` and `place`): the body, hashed on the way,
   * streamed into its version blob, then the blob read back and copied to
   * the key with its hash, since R2 takes metadata only before the body.
   * Two writes and a read of the bytes, where the plain floor makes one
   * write. No journal or audit commit: at this size they are noise.
   */
  async writeStaged(key: string, body: ReadableStream<Uint8Array>, length: number): Promise<{ size: number }> {
    this.readState();
    const blob = `.floor-versions/${crypto.randomUUID()}`;
    const digest = new crypto.DigestStream("SHA-256");
    const [toBlob, toHash] = body.tee();
    const hashing = toHash.pipeTo(digest);
    const staged = new FixedLengthStream(length);
    const piping = toBlob.pipeTo(staged.writable);
    await this.env.BUCKET.put(blob, staged.readable);
    await Promise.all([piping, hashing]);
    const sha256 = hex(await digest.digest);
    const object = await this.env.BUCKET.get(blob);
    if (!object) throw new Error("the staged blob is gone");
    const placed = new FixedLengthStream(object.size);
    const copying = object.body.pipeTo(placed.writable);
    const stored = await this.env.BUCKET.put(key, placed.readable, { customMetadata: { sha256 } });
    await copying;
    return { size: stored.size };
  }

  /**
   * A disk write as the vault's cap object makes it (cap-files.ts `write`,
   * disk-storage.ts): the state row, the body streamed from this object to
   * the Node process over the unix socket, which writes it durably, then the
   * journal's commit and the audit line.
   */
  async writeDisk(path: string, body: ReadableStream<Uint8Array>): Promise<number> {
    this.readState();
    const disk = this.env.DISK;
    if (!disk) throw new Error("no socket disk floor");
    const init = { method: "PUT", body, duplex: "half" };
    const answer = await disk.fetch(`http://disk/file?path=${encodeURIComponent(path)}&durable=1`, init as RequestInit);
    await answer.body?.cancel();
    if (answer.status !== 201) return answer.status;
    await this.journal().commit(`write ${path}`);
    this.commit(`audit write ${path}`);
    return 201;
  }

  /** The journal's side: one row, one commit. */
  commit(text: string): null {
    this.ctx.storage.sql.exec("INSERT INTO line (text) VALUES (?)", text);
    return null;
  }

  private journal(): DurableObjectStub<FloorObject> {
    return this.env.OBJECTS.get(this.env.OBJECTS.idFromName("journal"));
  }

  private readState(): { rights: string; root: string } {
    return this.ctx.storage.sql
      .exec<{ rights: string; root: string }>("SELECT rights, root FROM state WHERE id = 1")
      .one();
  }
}

function hex(buffer: ArrayBuffer): string {
  return [...new Uint8Array(buffer)].map((b) => b.toString(16).padStart(2, "0")).join("");
}
