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
  | { kind: "proved"; jkt: string; fresh: true; jti: string; iat: number; replayableUntil: number }
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

/** Storage key of the newest `iat` (ms) this cap may have admitted: a restarted object refuses proofs up to it. */
const ADMITTED_UNTIL = "holder-admitted-until";
/** How far ahead of a proof's `iat` the mark is moved, so a busy cap writes it about once per this many ms. */
const MARK_LEAD_MS = 5_000;

/**
 * The `jti`s a cap has seen, each kept in memory until its proof could no
 * longer be fresh. Replays across a restart of the object (which forgets the
 * map) are refused by a durable mark instead: every admitted proof has an
 * `iat` at or below the stored mark (moved ahead, and committed before the
 * answer, when a proof passes it), and a restarted object refuses any proof
 * with an `iat` at or below the mark it finds, so no proof the last life
 * admitted can pass again. Only the request that moves the mark waits for a
 * commit; after a restart in use, the holder's proofs are refused (401)
 * until its clock passes the mark, at most {@link MARK_LEAD_MS} plus the 5 s
 * future allowance.
 */
export class HolderProofs {
  readonly #seen = new Map<string, number>();
  /** The mark of the last life, read once: proofs with an `iat` at or below it are refused. */
  #floor: number | null = null;
  /** The mark as stored now (every admitted `iat` is at or below it). */
  #mark = 0;
  #loading: Promise<void> | null = null;
  /** Refused proofs show in the cap's audit (op `holder_proof`): the holder sees its leaked URL being tried. */
  readonly #log: AuditLog;

  constructor(private readonly storage: DurableObjectStorage) {
    this.#log = new AuditLog(storage.sql);
  }

  /** Reads the last life's mark once per life of the object; call before {@link admit}. */
  async ready(): Promise<void> {
    if (this.#floor !== null) return;
    this.#loading ??= this.storage.get<number>(ADMITTED_UNTIL).then((mark) => {
      this.#floor = mark ?? 0;
      this.#mark = this.#floor;
    });
    await this.#loading;
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
    // ready() ran before; without the last life's mark a replay across a restart could pass.
    if (this.#floor === null) return refuse("unavailable");
    const iatMs = admission.iat * 1000;
    if (iatMs <= this.#floor) return refuse("invalidDpopProof");
    const until = this.#seen.get(admission.jti);
    if (until !== undefined && until >= now) return refuse("invalidDpopProof");
    if (this.#seen.size >= MAX_REMEMBERED_PROOFS) this.#forgetExpired(now);
    if (this.#seen.size >= MAX_REMEMBERED_PROOFS) return refuse("tooManyProofs");
    this.#seen.set(admission.jti, admission.replayableUntil);
    if (iatMs > this.#mark) {
      // Output-gated: this answer waits until the mark is durable.
      this.#mark = iatMs + MARK_LEAD_MS;
      this.storage.put(ADMITTED_UNTIL, this.#mark).catch(() => undefined);
    }
    return ok(null);
  }

  #forgetExpired(now: number): void {
    for (const [jti, until] of this.#seen) if (until < now) this.#seen.delete(jti);
  }
}
