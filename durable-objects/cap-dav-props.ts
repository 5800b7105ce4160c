import { refuse } from "../shared/refusals.ts";
import { ok, type Result } from "../shared/result.ts";
import type { CapAuthorize } from "./cap-authorize.ts";
import type { CapHost } from "./cap-host.ts";

/**
 * Bounds of a cap's WebDAV dead properties: a PROPPATCH flood costs the
 * vault at most {@link MAX_DAV_PROP_CAP_BYTES} of the cap's object, whatever
 * the client sends. Windows sets a few small properties on every file it
 * uploads, so the per-cap count of resources is generous and the bytes bound it.
 */
export const MAX_DAV_PROPS_PER_RESOURCE = 32;
export const MAX_DAV_PROP_VALUE_BYTES = 4096;
/** A property's namespace and local name together. */
export const MAX_DAV_PROP_NAME_BYTES = 1024;
export const MAX_DAV_PROP_RESOURCES = 10_000;
export const MAX_DAV_PROP_CAP_BYTES = 16 * 1024 * 1024;
const TABLE = "dav_props";

/** One dead property: its namespace, local name and value, the value as XML (worker/dav/dav-xml.ts wrote it). */
export interface DeadProp {
  ns: string;
  name: string;
  xml: string;
}

export type PropOp = { op: "set"; ns: string; name: string; xml: string } | { op: "remove"; ns: string; name: string };

/**
 * A PROPPATCH's outcome: applied whole, or nothing changed and `failing`
 * (indexes into the ops) past a bound: the cap's own when `full`, else the resource's.
 */
export type PatchOutcome = { applied: true } | { applied: false; failing: number[]; full: boolean };

const utf8 = new TextEncoder();
const sizeOf = (p: DeadProp) =>
  utf8.encode(p.ns).byteLength + utf8.encode(p.name).byteLength + utf8.encode(p.xml).byteLength;
/** The first key after every path below `dir/`: `/` + 1 is `0`. */
const below = (path: string) => [`${path}/`, `${path}0`] as const;

/**
 * WebDAV dead properties of one cap, one SQLite row per resource (its path,
 * cap-relative, "" the root), in the cap's own object beside its locks: they
 * end with the cap, and no other cap over the same files sees them. They
 * belong to the path: WebDAV's DELETE drops them, MOVE moves and COPY copies
 * them; the HTTP API, MCP and RPC leave them where they are.
 */
export class CapDavProps {
  private ready = false;

  constructor(
    private readonly host: CapHost,
    private readonly gate: CapAuthorize,
  ) {}

  private get sql(): SqlStorage {
    const sql = this.host.storage.sql;
    if (!this.ready) {
      sql.exec(
        `CREATE TABLE IF NOT EXISTS ${TABLE} (path TEXT PRIMARY KEY, bytes INTEGER NOT NULL, props TEXT NOT NULL) WITHOUT ROWID`,
      );
      this.ready = true;
    }
    return sql;
  }

  private async checked(raw: (string | null)[], write: boolean): Promise<Result<string[]>> {
    const access = await this.gate.authorize(write ? { rights: ["write"] } : { rights: ["read", "list"], any: true }, {
      kind: "entry",
      raw,
    });
    return access.ok ? ok(access.value.paths.map((p) => p.path.text)) : access;
  }

  private propsAt(path: string): DeadProp[] {
    const row = this.sql.exec<{ props: string }>(`SELECT props FROM ${TABLE} WHERE path = ?`, path).toArray()[0];
    return row ? (JSON.parse(row.props) as DeadProp[]) : [];
  }

  private totals(): { resources: number; bytes: number } {
    const row = this.sql
      .exec<{ n: number; b: number | null }>(`SELECT COUNT(*) AS n, SUM(bytes) AS b FROM ${TABLE}`)
      .one();
    return { resources: row.n, bytes: row.b ?? 0 };
  }

  private store(path: string, props: DeadProp[]): void {
    if (props.length === 0) this.sql.exec(`DELETE FROM ${TABLE} WHERE path = ?`, path);
    else
      this.sql.exec(
        `INSERT OR REPLACE INTO ${TABLE} (path, bytes, props) VALUES (?, ?, ?)`,
        path,
        props.reduce((n, p) => n + sizeOf(p), 0),
        JSON.stringify(props),
      );
  }

  /**
   * Sets and removes properties of one path in document order (RFC 4918
   * §9.2), all or nothing: past a bound, nothing is written and the ops
   * that broke it are named. Synchronous once authorized, so no other
   * request interleaves between the check and the write.
   */
  async patch(rawPath: string | null, ops: PropOp[]): Promise<Result<PatchOutcome>> {
    const at = await this.checked([rawPath], true);
    if (!at.ok) return at;
    const path = at.value[0]!;
    const props = this.propsAt(path);
    const had = props.length > 0;
    const failing: number[] = [];
    let full = false;
    for (const [i, op] of ops.entries()) {
      const index = props.findIndex((p) => p.ns === op.ns && p.name === op.name);
      if (op.op === "remove") {
        if (index !== -1) props.splice(index, 1);
        continue;
      }
      const prop = { ns: op.ns, name: op.name, xml: op.xml };
      const nameBytes = utf8.encode(op.ns).byteLength + utf8.encode(op.name).byteLength;
      if (nameBytes > MAX_DAV_PROP_NAME_BYTES || utf8.encode(op.xml).byteLength > MAX_DAV_PROP_VALUE_BYTES)
        failing.push(i);
      else if (index !== -1) props[index] = prop;
      else if (props.length >= MAX_DAV_PROPS_PER_RESOURCE) failing.push(i);
      else props.push(prop);
    }
    if (failing.length === 0 && props.length > 0) {
      const { resources, bytes } = this.totals();
      const before = had
        ? this.sql.exec<{ bytes: number }>(`SELECT bytes FROM ${TABLE} WHERE path = ?`, path).one().bytes
        : 0;
      const after = props.reduce((n, p) => n + sizeOf(p), 0);
      const tooMany = !had && resources >= MAX_DAV_PROP_RESOURCES;
      full = tooMany || (after > before && bytes - before + after > MAX_DAV_PROP_CAP_BYTES);
      if (full) for (const [i, op] of ops.entries()) if (op.op === "set") failing.push(i);
    }
    if (failing.length > 0) return ok({ applied: false, failing, full });
    this.store(path, props);
    return ok({ applied: true });
  }

  /** The dead properties of each path asked (a PROPFIND's page, at most a few hundred), `[]` where none. */
  async get(rawPaths: string[]): Promise<Result<DeadProp[][]>> {
    const at = await this.checked(rawPaths, false);
    if (!at.ok) return at;
    const found = new Map<string, DeadProp[]>();
    // One binding, whatever the page's length: the runtime bounds a statement's parameters.
    for (const row of this.sql.exec<{ path: string; props: string }>(
      `SELECT path, props FROM ${TABLE} WHERE path IN (SELECT value FROM json_each(?))`,
      JSON.stringify(at.value),
    ))
      found.set(row.path, JSON.parse(row.props) as DeadProp[]);
    return ok(at.value.map((p) => found.get(p) ?? []));
  }

  /** Drops the properties at or below a path WebDAV deleted or is about to overwrite (RFC 4918 §9.6). */
  async drop(rawPath: string | null): Promise<Result<null>> {
    const at = await this.checked([rawPath], true);
    if (!at.ok) return at;
    const path = at.value[0]!;
    if (path === "") this.sql.exec(`DELETE FROM ${TABLE}`);
    else this.sql.exec(`DELETE FROM ${TABLE} WHERE path = ? OR (path >= ? AND path < ?)`, path, ...below(path));
    return ok(null);
  }

  /**
   * Moves (RFC 4918 §9.9.1) or copies (§9.8.2) the properties at and below
   * `from` (only at it, for a Depth 0 copy: not `subtree`) onto `to`,
   * replacing any at and below `to`. A copy past the cap's bounds
   * copies nothing and is refused before the files are touched.
   */
  async carry(rawFrom: string | null, rawTo: string | null, move: boolean, subtree: boolean): Promise<Result<null>> {
    const at = await this.checked([rawFrom, rawTo], true);
    if (!at.ok) return at;
    const [from, to] = at.value as [string, string];
    if (from === "" || to === "") return refuse("davSameResource");
    const rows = this.sql
      .exec<{ path: string; bytes: number; props: string }>(
        `SELECT path, bytes, props FROM ${TABLE} WHERE path = ? OR (? AND path >= ? AND path < ?)`,
        from,
        subtree ? 1 : 0,
        ...below(from),
      )
      .toArray();
    if (!move && rows.length > 0) {
      const { resources, bytes } = this.totals();
      const adding = rows.reduce((n, r) => n + r.bytes, 0);
      if (resources + rows.length > MAX_DAV_PROP_RESOURCES || bytes + adding > MAX_DAV_PROP_CAP_BYTES)
        return refuse("davPropsFull", { resources: MAX_DAV_PROP_RESOURCES, bytes: MAX_DAV_PROP_CAP_BYTES });
    }
    this.host.storage.transactionSync(() => {
      this.sql.exec(`DELETE FROM ${TABLE} WHERE path = ? OR (path >= ? AND path < ?)`, to, ...below(to));
      for (const row of rows) {
        if (move) this.sql.exec(`DELETE FROM ${TABLE} WHERE path = ?`, row.path);
        this.sql.exec(
          `INSERT OR REPLACE INTO ${TABLE} (path, bytes, props) VALUES (?, ?, ?)`,
          to + row.path.slice(from.length),
          row.bytes,
          row.props,
        );
      }
    });
    return ok(null);
  }
}
