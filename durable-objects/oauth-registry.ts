import { DurableObject } from "cloudflare:workers";
import { refuse } from "../shared/refusals.ts";
import { ok, type Result } from "../shared/result.ts";
import { blockedBy, type Migration, migrateOnWake } from "./state-migrations.ts";

/**
 * The OAuth authorization server's state (issue 22): one object for the
 * vault (`idFromName("oauth")`), holding registered clients, pending codes
 * and the tokens of each grant. Every secret (code, access token, refresh
 * token) is known here only by its SHA-256 digest; the child cap a grant
 * stands for is stored sealed under that secret (worker/oauth/oauth-secrets.ts),
 * so a dump of this storage opens nothing. Every key is listed in docs/oauth.md.
 *
 * Every method is synchronous over the SQLite-backed KV (`ctx.storage.kv`):
 * no await, so no other request interleaves between a check and its write
 * (single-use codes and refresh rotation depend on that).
 */

/** How many clients may be registered at once: registration is open to anyone. */
export const MAX_CLIENTS = 10_000;
/** Registrations the vault accepts per minute, all clients together. */
export const REGISTRATIONS_PER_MINUTE = 30;
/**
 * Authorization requests (the consent page and its answers) a client may make
 * per minute. Counted in memory: a restart forgetting a minute's counts costs
 * nothing, and a durable write per page view would cost every honest one.
 * With registrations bounded too, the vault's consent traffic is bounded.
 */
export const AUTHORIZATIONS_PER_MINUTE = 60;
/** Expired records removed per alarm; the alarm runs again while any remain. */
const SWEEP_BATCH = 500;
const SWEEP_EVERY_MS = 60 * 60 * 1000;

export interface ClientRecord {
  name: string;
  redirectUris: string[];
  createdAt: number;
}

/** A code issued at consent, waiting for its one exchange. */
export interface CodeRecord {
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  resource: string;
  /** The child cap's public id (the grant is labelled with it in the delegation tree). */
  childId: string;
  /** The child cap's token, sealed under the code. */
  sealed: string;
  expiresAt: number;
  /** When the child cap expires (ms), or null: the grant's own end. */
  grantExpiresAt: number | null;
  /** Set once exchanged: the grant it started, so a replay can end that grant. */
  grantId?: string;
}

export interface TokenRecord {
  grantId: string;
  clientId: string;
  resource: string;
  childId: string;
  /** The child cap's token, sealed under this token. */
  sealed: string;
  expiresAt: number | null;
  /** DPoP-bound (RFC 9449): the thumbprint of the client key every use must prove. */
  jkt?: string;
}

interface GrantRecord {
  clientId: string;
  childId: string;
  access: string;
  refresh: string;
  /** The refresh token rotated out last: presenting it again means it leaked. */
  previous: string | null;
  expiresAt: number | null;
  /** The key a DPoP-bound grant's tokens are bound to, fixed at the code exchange. */
  jkt?: string;
}

export interface IssuedTokens {
  grantId: string;
  accessDigest: string;
  access: TokenRecord;
  refreshDigest: string;
  refresh: TokenRecord;
}

export type RefreshOutcome =
  | { kind: "rotated" }
  | { kind: "unknown" }
  | { kind: "wrong_client" }
  /** A rotated-out token came back: the grant is ended; `record` lets the caller revoke its cap. */
  | { kind: "reused"; record: TokenRecord };

export type RegisterOutcome = { kind: "registered" } | { kind: "full" } | { kind: "busy" };

export type AuthorizingClient = { kind: "ok"; client: ClientRecord } | { kind: "unknown" } | { kind: "busy" };

/** What a vault export carries of this registry: clients and live grants with their token digests (no codes: they last 60 s). */
const CARRIED_PREFIXES = ["client:", "access:", "refresh:", "grant:"];
/** Entries per export or import page. */
export const OAUTH_PAGE = 200;

const expired = (expiresAt: number | null, now: number) => expiresAt !== null && expiresAt <= now;

/** The registry's migrations (state-migrations.ts). Its clients, codes and grants are sync KV entries, unchanged. */
const OAUTH_MIGRATIONS: readonly Migration[] = [
  {
    to: 2,
    what: "the DPoP proof table, made at once instead of on the first proof",
    up({ sql }) {
      // The DPoP proofs seen at the token endpoint and /mcp, each until it could no longer be fresh.
      sql.exec(
        "CREATE TABLE IF NOT EXISTS dpop_proofs (jkt TEXT NOT NULL, jti TEXT NOT NULL, until INTEGER NOT NULL, PRIMARY KEY (jkt, jti))",
      );
      sql.exec("CREATE INDEX IF NOT EXISTS dpop_proofs_until ON dpop_proofs (until)");
    },
  },
];

export class OAuthRegistry extends DurableObject {
  /** The registry's format, checked (and its state migrated) before any call: state-migrations.ts. */
  readonly #blocked = blockedBy(migrateOnWake(this.ctx.storage, "oauth", OAUTH_MIGRATIONS, { stampEmpty: true }));

  /**
   * Throws on state this build cannot serve. This registry's calls answer
   * plain values, not Results, so the refusal reaches the worker as a
   * rejected call, which it answers 503 unavailable (worker/app.ts).
   */
  #open(): void {
    if (this.#blocked) throw new Error(this.#blocked.error.message);
  }
  private get kv(): SyncKvStorage {
    return this.ctx.storage.kv;
  }

  /** This minute's authorization requests per client; replaced whole when the minute turns. */
  #authorizations = { window: -1, counts: new Map<string, number>() };

  /**
   * Records a verified proof's `jti` for its key: false when seen before
   * (a replay). Durable, so a restart forgets nothing; each call also drops a
   * few expired rows, so the table holds about one proof window of traffic.
   */
  spendProof(jkt: string, jti: string, until: number, now: number): boolean {
    this.#open();
    const sql = this.ctx.storage.sql;
    sql.exec(
      "DELETE FROM dpop_proofs WHERE rowid IN (SELECT rowid FROM dpop_proofs WHERE until < ? ORDER BY until LIMIT 8)",
      now,
    );
    if (sql.exec("SELECT 1 FROM dpop_proofs WHERE jkt = ? AND jti = ?", jkt, jti).toArray().length > 0) return false;
    sql.exec("INSERT INTO dpop_proofs (jkt, jti, until) VALUES (?, ?, ?)", jkt, jti, until);
    return true;
  }

  /**
   * For a vault export (docs/export-import.md): a page of the carried entries
   * after the key `after`, as stored: digests and sealed caps, never a secret.
   */
  exportEntries(after: string | null): Result<{ entries: [string, unknown][]; cursor: string | null }> {
    if (this.#blocked) return this.#blocked;
    if (after !== null && typeof after !== "string") return refuse("invalidCursor");
    const entries: [string, unknown][] = [];
    let last: string | null = null;
    let scanned = 0;
    for (const [key, value] of this.kv.list({ ...(after ? { startAfter: after } : {}), limit: OAUTH_PAGE })) {
      scanned++;
      last = key;
      if (CARRIED_PREFIXES.some((p) => key.startsWith(p))) entries.push([key, value]);
    }
    return ok({ entries, cursor: scanned === OAUTH_PAGE ? last : null });
  }

  /**
   * For a vault import: writes a page of entries an export read, each only
   * where the key is free (a merge keeps this vault's own), counting the
   * clients added. Refused whole when any entry is not of a carried kind.
   */
  importEntries(raw: unknown): Result<number> {
    if (this.#blocked) return this.#blocked;
    if (!Array.isArray(raw) || raw.length > OAUTH_PAGE) return refuse("importMalformed");
    const valid = raw.every(
      (e) =>
        Array.isArray(e) &&
        e.length === 2 &&
        typeof e[0] === "string" &&
        e[0].length <= 512 &&
        CARRIED_PREFIXES.some((p) => (e[0] as string).startsWith(p)) &&
        typeof e[1] === "object" &&
        e[1] !== null,
    );
    if (!valid) return refuse("importMalformed");
    let clients = 0;
    for (const [key, value] of raw as [string, unknown][]) {
      if (this.kv.get(key) !== undefined) continue;
      this.kv.put(key, value);
      if (key.startsWith("client:")) clients++;
    }
    if (clients > 0) this.kv.put("meta:clients", (this.kv.get<number>("meta:clients") ?? 0) + clients);
    return ok(raw.length);
  }

  register(clientId: string, client: ClientRecord, now: number): RegisterOutcome {
    this.#open();
    const count = this.kv.get<number>("meta:clients") ?? 0;
    if (count >= MAX_CLIENTS) return { kind: "full" };
    const window = Math.floor(now / 60_000);
    const rate = this.kv.get<{ window: number; count: number }>("meta:registrations");
    const used = rate?.window === window ? rate.count : 0;
    if (used >= REGISTRATIONS_PER_MINUTE) return { kind: "busy" };
    this.kv.put("meta:registrations", { window, count: used + 1 });
    this.kv.put("meta:clients", count + 1);
    this.kv.put(`client:${clientId}`, client);
    return { kind: "registered" };
  }

  client(clientId: string): ClientRecord | null {
    this.#open();
    return this.kv.get<ClientRecord>(`client:${clientId}`) ?? null;
  }

  /** The client an authorization request names, counted against its minute's allowance. */
  authorizingClient(clientId: string, now: number): AuthorizingClient {
    this.#open();
    const client = this.client(clientId);
    if (!client) return { kind: "unknown" };
    const window = Math.floor(now / 60_000);
    if (this.#authorizations.window !== window) this.#authorizations = { window, counts: new Map() };
    const used = this.#authorizations.counts.get(clientId) ?? 0;
    if (used >= AUTHORIZATIONS_PER_MINUTE) return { kind: "busy" };
    this.#authorizations.counts.set(clientId, used + 1);
    return { kind: "ok", client };
  }

  async putCode(digest: string, record: CodeRecord): Promise<null> {
    this.#open();
    this.kv.put(`code:${digest}`, record);
    await this.scheduleSweep();
    return null;
  }

  /**
   * The code's record, marked used: the first call gets `fresh`, every later
   * one `replayed` (with the grant it started, which the caller then ends);
   * past its time, `expired` once (so the caller can revoke the cap it sealed).
   */
  takeCode(digest: string, now: number): { kind: "fresh" | "replayed" | "expired"; record: CodeRecord } | null {
    this.#open();
    const record = this.kv.get<CodeRecord>(`code:${digest}`);
    if (!record) return null;
    if (record.grantId !== undefined) return { kind: "replayed", record };
    if (expired(record.expiresAt, now)) {
      this.kv.delete(`code:${digest}`);
      return { kind: "expired", record };
    }
    // Kept (marked) until the sweep, so a replay is recognised rather than merely unknown.
    this.kv.put(`code:${digest}`, { ...record, grantId: "" });
    return { kind: "fresh", record };
  }

  /** Stores a new grant's first tokens; `codeDigest` records which grant the code started. */
  issue(tokens: IssuedTokens, codeDigest: string): null {
    this.#open();
    const code = this.kv.get<CodeRecord>(`code:${codeDigest}`);
    if (code) this.kv.put(`code:${codeDigest}`, { ...code, grantId: tokens.grantId });
    this.kv.put(`access:${tokens.accessDigest}`, tokens.access);
    this.kv.put(`refresh:${tokens.refreshDigest}`, tokens.refresh);
    this.kv.put(`grant:${tokens.grantId}`, {
      clientId: tokens.access.clientId,
      childId: tokens.access.childId,
      access: tokens.accessDigest,
      refresh: tokens.refreshDigest,
      previous: null,
      expiresAt: tokens.refresh.expiresAt,
      ...(tokens.access.jkt ? { jkt: tokens.access.jkt } : {}),
    } satisfies GrantRecord);
    return null;
  }

  /** A live access token's record; an expired one is removed and answers null. */
  access(digest: string, now: number): TokenRecord | null {
    this.#open();
    const record = this.kv.get<TokenRecord>(`access:${digest}`);
    if (!record) return null;
    if (expired(record.expiresAt, now)) {
      this.kv.delete(`access:${digest}`);
      return null;
    }
    return this.kv.get<GrantRecord>(`grant:${record.grantId}`) ? record : null;
  }

  /** A live refresh token's record without using it (the caller checks the cap before rotating). */
  peekRefresh(digest: string, now: number): TokenRecord | null {
    this.#open();
    const record = this.kv.get<TokenRecord>(`refresh:${digest}`);
    if (!record || expired(record.expiresAt, now)) return null;
    return record;
  }

  /**
   * Rotation: the presented refresh token is replaced by `next` (and the
   * grant's access token by a new one). Presenting the token rotated out
   * last ends the grant (OAuth 2.1 §4.3.1: one of two parties holds a copy).
   */
  rotate(presented: string, clientId: string, next: IssuedTokens, now: number): RefreshOutcome {
    this.#open();
    const record = this.kv.get<TokenRecord>(`refresh:${presented}`);
    if (!record || expired(record.expiresAt, now)) return { kind: "unknown" };
    if (record.clientId !== clientId) return { kind: "wrong_client" };
    const grant = this.kv.get<GrantRecord>(`grant:${record.grantId}`);
    if (!grant) return { kind: "unknown" };
    if (grant.refresh !== presented) {
      this.endGrant(record.grantId);
      return { kind: "reused", record };
    }
    this.kv.delete(`access:${grant.access}`);
    if (grant.previous) this.kv.delete(`refresh:${grant.previous}`);
    this.kv.put(`access:${next.accessDigest}`, { ...next.access, grantId: record.grantId });
    this.kv.put(`refresh:${next.refreshDigest}`, { ...next.refresh, grantId: record.grantId });
    this.kv.put(`grant:${record.grantId}`, {
      ...grant,
      access: next.accessDigest,
      refresh: next.refreshDigest,
      previous: presented,
    } satisfies GrantRecord);
    return { kind: "rotated" };
  }

  /** Forgets a grant and every token of it (its cap is revoked by the caller). */
  endGrant(grantId: string): null {
    this.#open();
    const grant = this.kv.get<GrantRecord>(`grant:${grantId}`);
    if (!grant) return null;
    this.kv.delete(`access:${grant.access}`);
    this.kv.delete(`refresh:${grant.refresh}`);
    if (grant.previous) this.kv.delete(`refresh:${grant.previous}`);
    this.kv.delete(`grant:${grantId}`);
    return null;
  }

  private async scheduleSweep(): Promise<void> {
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(Date.now() + SWEEP_EVERY_MS);
  }

  /** Removes expired codes, tokens and grants, a bounded batch at a time. */
  override async alarm(): Promise<void> {
    if (this.#blocked) return;
    const now = Date.now();
    let removed = 0;
    for (const prefix of ["code:", "access:", "refresh:", "grant:"]) {
      for (const [key, value] of this.kv.list<{ expiresAt: number | null }>({ prefix })) {
        if (removed >= SWEEP_BATCH) break;
        // A used code stays a while past its expiry, so a late replay still ends its grant.
        const end = prefix === "code:" && value.expiresAt !== null ? value.expiresAt + SWEEP_EVERY_MS : value.expiresAt;
        if (expired(end, now)) {
          this.kv.delete(key);
          removed++;
        }
      }
    }
    const more =
      removed >= SWEEP_BATCH || this.kv.list({ prefix: "code:", limit: 1 })[Symbol.iterator]().next().done === false;
    if (more) await this.ctx.storage.setAlarm(now + (removed >= SWEEP_BATCH ? 1000 : SWEEP_EVERY_MS));
  }
}
