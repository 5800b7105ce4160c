import { ok, type Result } from "../shared/result.ts";
import { AUDIT_TABLES, type AuditLog } from "./audit-log.ts";
import { type CapAuthorize, noSuchCap, RECORD } from "./cap-authorize.ts";
import type { CapHost } from "./cap-host.ts";
import { type CapRecord, type CapRef, TOMBSTONE, type Tombstone } from "./cap-record.ts";
import { closeWatchSockets } from "./cap-watch-socket.ts";
import { CHILD, CHILD_COUNT, chunks } from "./child-index.ts";
import { holdsOnly } from "./leaf-state.ts";
import { capObjectStub, rootRegistryStub } from "./object-stubs.ts";
import { revokeChildren } from "./revocation-cascade.ts";
import { FORMAT_TABLE } from "./state-migrations.ts";

/** Left where a revocation reached: refuses a late init and holds the parent until the alarm clears it. */
/** How soon an unfinished revocation cascade is retried. */
const RETRY_MS = 5_000;
/** setTimeout's largest delay; longer ones fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface RevokeOutcome {
  /** Descendants not yet reached; their revocation is finished by alarms. */
  pending: number;
}

/**
 * Revocation of one cap: the kill and its cascade, the alarm that retries it
 * and expires the cap, and stopping whatever runs through the cap. Authority
 * is checked when an operation starts, so revocation must also stop the ones
 * already running: it aborts their streams and waits for them, and only then
 * answers, so nothing lands through a cap after its revocation returned.
 */
export class CapRevocation {
  /** Transfers and mutations running through this cap (see {@link revocable}). */
  private readonly running = new Set<{ abort: AbortController; settled: Promise<unknown> }>();
  /** Change feeds open through this cap, each by its closer: revocation closes them (cap-versions.ts). */
  readonly watches = new Set<() => void>();

  constructor(
    private readonly host: CapHost,
    private readonly gate: CapAuthorize,
    private readonly log: AuditLog,
  ) {}

  /** Whether a revocation has reached this key: such a cap may never come alive (see CapObject.init). */
  async tombstoned(): Promise<boolean> {
    return (await this.host.storage.get(TOMBSTONE)) !== undefined;
  }

  /** The holder revokes this cap: it and every descendant, then its parent forgets it. */
  async revoke(): Promise<Result<RevokeOutcome>> {
    const cap = await this.gate.live();
    if (!cap) return noSuchCap();
    const outcome = await this.cascade();
    if (cap.parent) {
      // Best effort: a parent that missed this still lists a dead child until
      // it is asked to revoke it, which then finds nothing and succeeds.
      await capObjectStub(this.host.env, cap.parent.key)
        .forgetChild(cap.id)
        .catch(() => null);
    } else {
      await rootRegistryStub(this.host.env)
        .forgetRoot(cap.id)
        .catch(() => null);
    }
    return ok(outcome);
  }

  async alarm(): Promise<void> {
    const cap = await this.host.storage.get<CapRecord>(RECORD);
    // No record: a revocation left work (unreached children, state to clear); finish it.
    if (!cap) {
      // Every descendant reached and every upload settled: clear the rest.
      // Nothing but storage calls since the cascade's last look at the
      // children, so no racing mint can have recorded one in between.
      if ((await this.cascade()).pending === 0) {
        await this.host.storage.deleteAll();
        await this.host.storage.deleteAlarm();
      }
      return;
    }
    if (cap.expiresAt !== null && Date.now() >= cap.expiresAt) {
      // Descendants expire no later than this cap, by their own clocks and
      // alarms. Uploads were cut at expiresAt by their timers; stop any the
      // timer missed before the state goes, so none lands after expiry.
      await this.stopRunning();
      await this.host.storage.deleteAll();
    } else if (cap.expiresAt !== null) {
      await this.host.storage.setAlarm(cap.expiresAt);
    }
  }

  /**
   * Kills this cap and its subtree. The record goes first, in one commit with
   * a tombstone and an alarm (a leaf holding nothing else needs neither, see
   * below), so from that instant every request here answers
   * `no_such_cap`. Then it stops what is running here and revokes the
   * children in bounded batches, each of which does the same before it
   * answers. So when this answers with `pending: 0`, every descendant's
   * record is gone and every upload through any of them has settled: each is
   * dead on every route and nothing lands through it afterwards, even when a
   * record was already gone (expired, or a second revocation under way).
   * Children not reached keep their records; `pending` counts them, and the
   * alarm retries them. The alarm also clears the rest of the state, so that
   * costly `deleteAll()` stays off the answer's path.
   */
  async cascade(): Promise<RevokeOutcome> {
    const cap = await this.host.storage.get<CapRecord>(RECORD);
    const earlier = await this.host.storage.get<Tombstone>(TOMBSTONE);
    const children = (await this.host.storage.list({ prefix: CHILD, limit: 1 })).size > 0;
    if (!cap && !earlier && !children) {
      // Never minted, or revoked and cleared already: an upload still running
      // here (its record expired) must settle first. A mint's init may still
      // be on its way (see CapObject.init): the tombstone refuses it; the alarm clears it.
      await this.host.storage.put(TOMBSTONE, { pending: [], parent: null } satisfies Tombstone);
      await this.host.storage.setAlarm(Date.now() + RETRY_MS);
      await this.stopRunning();
      return { pending: 0 };
    }
    // A cap with no children that holds nothing else is left empty by its kill,
    // so it needs no tombstone and no alarm (each a commit of its own).
    const leaf =
      !earlier &&
      !children &&
      (await holdsOnly(this.host.storage, [RECORD, CHILD_COUNT], [...AUDIT_TABLES, FORMAT_TABLE]));
    // The kill: storage calls only, nothing else awaited between them, so
    // they land in one commit and a crash leaves the cap whole or dead.
    const tombstone: Tombstone = { pending: [], parent: cap?.parent ?? earlier?.parent ?? null };
    await this.host.storage.delete(leaf ? [RECORD, CHILD_COUNT] : [RECORD]);
    if (!leaf) await this.host.storage.put(TOMBSTONE, tombstone);
    // Older tombstones listed unreached children; they now stay as child records.
    const legacy = (earlier?.pending ?? []).map((ref): [string, CapRef] => [CHILD + ref.id, ref]);
    for (const batch of chunks(legacy, 128)) await this.host.storage.put(Object.fromEntries(batch));
    this.log.clear();
    // A leaf is left empty, as a never-minted cap's object is: no format either (state-migrations.ts).
    if (leaf) this.host.storage.sql.exec(`DROP TABLE IF EXISTS ${FORMAT_TABLE}`);
    if (!leaf) await this.host.storage.setAlarm(Date.now() + RETRY_MS);

    const [pending] = await Promise.all([
      revokeChildren(this.host.storage, (ref) => capObjectStub(this.host.env, ref.key).revokeSubtree()),
      this.stopRunning(),
    ]);
    // A mint that raced this revocation and could not undo its child records
    // it here for the alarm: never clear a record nobody has reached. (A leaf
    // gets its alarm here too: the child record alone brings the alarm's
    // cascade back to it.)
    const left = (await this.host.storage.list({ prefix: CHILD, limit: 1 })).size;
    // The alarm retries what is left, then clears the state; its time is
    // pushed back while the fan-out still had children to reach.
    if (pending > 0 || left > 0) await this.host.storage.setAlarm(Date.now() + RETRY_MS);
    return { pending: Math.max(pending, left) };
  }

  /**
   * A child a mint made while this cap was being revoked, which could not be
   * revoked at once: its record is what the alarm's cascade walks.
   */
  async leaveForAlarm(child: CapRef): Promise<void> {
    const earlier = await this.host.storage.get<Tombstone>(TOMBSTONE);
    await this.host.storage.put({
      [CHILD + child.id]: { id: child.id, key: child.key },
      [TOMBSTONE]: { pending: [], parent: earlier?.parent ?? null } satisfies Tombstone,
    });
    await this.host.storage.setAlarm(Date.now() + RETRY_MS);
  }

  /**
   * Runs a mutation that revocation may abort, and that revocation waits for.
   * Expiry is revocation by the clock: a timer aborts it at `expiresAt`, so
   * an upload that began before is cut even if no alarm ever runs.
   */
  async revocable<T>(expiresAt: number | null, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const abort = new AbortController();
    const delay = expiresAt === null ? Infinity : Math.max(0, expiresAt - Date.now());
    // Longer delays overflow setTimeout (firing at once); cutOnAbort's deadline covers them.
    const timer = delay <= MAX_TIMER_MS ? setTimeout(() => abort.abort(), delay) : null;
    const settled = run(abort.signal);
    const entry = { abort, settled: settled.catch(() => undefined) };
    this.running.add(entry);
    try {
      return await settled;
    } finally {
      if (timer !== null) clearTimeout(timer);
      this.running.delete(entry);
    }
  }

  /** Aborts every mutation running through this cap and waits until each has settled. */
  async stopRunning(): Promise<void> {
    const stopping = [...this.running];
    for (const close of [...this.watches]) close();
    for (const op of stopping) op.abort.abort();
    await Promise.all([...stopping.map((op) => op.settled), closeWatchSockets(this.host.env, this.host.storage)]);
  }
}

/**
 * Passes a stream through, erroring it at once when `signal` aborts, even
 * while a read is pending, or at its end if `deadline` has passed: storage
 * then sees a failed body and stores nothing (R2 puts and disk renames are
 * all or nothing).
 */
export function cutOnAbort(
  source: ReadableStream<Uint8Array>,
  signal: AbortSignal,
  deadline: number | null,
): ReadableStream<Uint8Array> {
  let controller!: TransformStreamDefaultController<Uint8Array>;
  const guard = new TransformStream<Uint8Array, Uint8Array>({
    start(c) {
      controller = c;
    },
    // A body that completes after expiry (its timer late or never set) is refused whole.
    flush() {
      if (deadline !== null && Date.now() >= deadline) throw new Error("expired");
    },
  });
  const cut = () => controller.error(new Error("revoked"));
  signal.addEventListener("abort", cut, { once: true });
  source
    .pipeTo(guard.writable)
    .catch(() => undefined)
    .finally(() => signal.removeEventListener("abort", cut));
  return guard.readable;
}
