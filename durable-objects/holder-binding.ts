import type { GrantRequest } from "../shared/grant-request.ts";
import { importHolderKey, jwkThumbprint } from "../shared/holder-key.ts";
import { refuse } from "../shared/refusals.ts";
import { ok, type Result } from "../shared/result.ts";
import { AuditLog } from "./audit-log.ts";
import type { CapRecord } from "./cap-record.ts";

/**
 * Holder-bound caps in the cap's object (issue 20): the binding a mint gives
 * a child, and the admission of each request's proof after the worker checked
 * it (worker/holder-proof.ts): the key against the cap's, and each `jti` once.
 */

export type HolderBinding = { jkt: string } | null;

/**
 * What the worker found in a request to a cap that may be bound.
 * - `proved`: a proof whose signature verified under the key `jkt`; `fresh`
 *   false when its claims failed (stale, another URL...), else its `jti` and
 *   the time (ms) until which it could still be replayed.
 * - `unproved`: no proof, or none that verified (or a surface that does not
 *   take proofs yet): only an unbound cap admits it.
 */
export type HolderAdmission =
  | { kind: "proved"; jkt: string; fresh: false }
  | { kind: "proved"; jkt: string; fresh: true; jti: string; replayableUntil: number }
  | { kind: "unproved" };

/** Proofs remembered per cap within the replay window (60 s): about 68 requests a second per bound cap. */
export const MAX_REMEMBERED_PROOFS = 4096;

/**
 * The binding of a child minted from `parent`: the key the request names (a
 * valid public point), or none. Binding never loosens: a child of a bound
 * cap must name a key (the parent's or another's: sharing to a named holder).
 */
export async function childBinding(parent: CapRecord, request: GrantRequest): Promise<Result<HolderBinding>> {
  if (!request.holder && parent.holder) return refuse("holderRequired");
  return requestedBinding(request);
}

/** The binding a mint request names (a root's, or a child's once {@link childBinding} allowed it). */
export async function requestedBinding(request: GrantRequest): Promise<Result<HolderBinding>> {
  if (!request.holder) return ok(null);
  if (!(await importHolderKey(request.holder))) return refuse("holderInvalid");
  return ok({ jkt: await jwkThumbprint(request.holder) });
}

/** The record field for a binding: absent for a bearer cap, so unbound records stay as they were. */
export function holderField(binding: HolderBinding): { holder?: { jkt: string } } {
  return binding ? { holder: binding } : {};
}

/** The `jti`s a cap has seen, each kept until its proof could no longer be fresh. */
export class HolderProofs {
  #ready = false;
  /** Refused proofs show in the cap's audit (op `holder_proof`): the holder sees its leaked URL being tried. */
  readonly #log: AuditLog;

  constructor(private readonly sql: SqlStorage) {
    this.#log = new AuditLog(sql);
  }

  #table(): void {
    if (this.#ready) return;
    this.sql.exec("CREATE TABLE IF NOT EXISTS holder_proofs (jti TEXT PRIMARY KEY, until INTEGER NOT NULL)");
    this.sql.exec("CREATE INDEX IF NOT EXISTS holder_proofs_until ON holder_proofs (until)");
    this.#ready = true;
  }

  /**
   * Admits a request to the live cap `cap` (null: none). Anything but a fresh
   * proof by the cap's own key on a bound cap answers as an unknown cap would,
   * except a proof by that key that failed its claims or was seen before: the
   * holder is told (401). Synchronous from the lookup to the insert, so two
   * requests with one `jti` cannot both pass.
   */
  admit(cap: CapRecord | null, admission: HolderAdmission, now: number): Result<null> {
    if (!cap) return refuse("noSuchCap");
    if (!cap.holder?.jkt) return ok(null);
    const verdict = this.#verdict(cap.holder.jkt, admission, now);
    if (!verdict.ok) this.#log.record("holder_proof", null, verdict);
    return verdict;
  }

  #verdict(jkt: string, admission: HolderAdmission, now: number): Result<null> {
    if (admission.kind !== "proved" || admission.jkt !== jkt) return refuse("noSuchCap");
    if (!admission.fresh) return refuse("invalidDpopProof");
    this.#table();
    this.sql.exec("DELETE FROM holder_proofs WHERE until < ?", now);
    if (this.sql.exec("SELECT 1 FROM holder_proofs WHERE jti = ?", admission.jti).toArray().length > 0) {
      return refuse("invalidDpopProof");
    }
    const held = this.sql.exec("SELECT COUNT(*) AS n FROM holder_proofs").one().n as number;
    if (held >= MAX_REMEMBERED_PROOFS) return refuse("tooManyProofs");
    this.sql.exec("INSERT INTO holder_proofs (jti, until) VALUES (?, ?)", admission.jti, admission.replayableUntil);
    return ok(null);
  }
}
