import { refuse } from "../shared/refusals.ts";
import { ok, type Result } from "../shared/result.ts";
import { digestToken, reissuedToken } from "../shared/token.ts";
import type { ReissuedCap, ReissueStep } from "../shared/wire-types.ts";
import type { AuditLog, AuditRow } from "./audit-log.ts";
import { RECORD } from "./cap-authorize.ts";
import type { CapRecord, CapRef, ChildRecord } from "./cap-record.ts";
import { CHILD, CHILD_COUNT, chunks, orderKey } from "./child-index.ts";
import type { ObjectEnv } from "./object-env.ts";
import { capObjectStub } from "./object-stubs.ts";
import { type RegisteredRoot, ROOT_KEY_PREFIX } from "./registry-entry.ts";

/**
 * Re-issuing the caps of state format 0 (`capvault reissue-legacy`,
 * docs/upgrading.md). Format 0 minted unsigned 32-character tokens; the
 * worker refuses them all before any object is asked, so its caps are
 * unreachable, though their objects, files and trees are intact. The admin's
 * re-issue gives each such cap a signed token and a new object holding the
 * same record (root, rights, label, expiry, creation time), audit and place in
 * the tree, then wipes the old object. Files and versions are keyed by the
 * root prefix, not by the cap, so they stay where they are.
 *
 * The registry drives it in bounded steps, each a few calls per cap, with a
 * work list in its own storage; every step can be cut anywhere and run again.
 * A cap's new token is derived from the vault key and its old object's name
 * (shared/token.ts `reissuedToken`), so a rerun hands out the same token and
 * no token is ever stored.
 */

/** Exactly what format 0 wrote as a cap's record (`git show 5055285:durable-objects/cap-record.ts`). */
const FORMAT0_RECORD_FIELDS = ["id", "key", "backend", "root", "rights", "label", "createdAt", "expiresAt", "parent"];

/**
 * A record format 0 could have written: its nine fields and no other.
 * Every mint since depths were recorded writes `depth`, so a newer cap never
 * passes; caps minted under signed tokens before that look the same as
 * format 0's, which is why a root must also precede the vault's cutoff.
 */
export function isFormat0Record(record: unknown): record is CapRecord {
  if (typeof record !== "object" || record === null) return false;
  const fields = Object.keys(record);
  return fields.length === FORMAT0_RECORD_FIELDS.length && FORMAT0_RECORD_FIELDS.every((f) => fields.includes(f));
}

/** What a format-0 cap's object hands the registry: its record (or null: dead, expired, gone) and its audit. */
export interface LegacyRecord {
  record: CapRecord | null;
  audit: AuditRow[];
}

/** One page of a format-0 cap's children, as its object indexed them. */
export interface LegacyChildren {
  children: ChildRecord[];
  cursor: string | null;
}

/** How a re-issued cap's new object took its record: made now, made by an earlier step, or revoked since. */
export type AdoptOutcome = "made" | "exists" | "gone";

const CHILD_PAGE = 100;

/** The cap object's side: it answers only for a live record of format 0's shape. */
export const legacyObject = {
  async record(storage: DurableObjectStorage, log: AuditLog, live: CapRecord | null): Promise<LegacyRecord> {
    // A revocation under way (its tombstone, cap-revocation.ts) has already killed this cap.
    if (!live || !isFormat0Record(live) || (await storage.get("tombstone"))) return { record: null, audit: [] };
    return { record: live, audit: log.rows() };
  },

  async children(storage: DurableObjectStorage, after: string | null): Promise<LegacyChildren> {
    const cap = await storage.get(RECORD);
    if (!isFormat0Record(cap)) return { children: [], cursor: null };
    const page = await storage.list<ChildRecord>({
      prefix: CHILD,
      limit: CHILD_PAGE,
      ...(after === null ? {} : { startAfter: CHILD + after }),
    });
    // A record left by a revocation that could not reach its child has no path: nothing to re-issue.
    const children = [...page.values()].filter((c) => typeof c.path === "string");
    const last = [...page.values()].at(-1);
    return { children, cursor: page.size === CHILD_PAGE && last ? last.id : null };
  },

  /**
   * Takes a re-issued record and its audit, once: a second call for the same
   * format-0 cap is a no-op, and a key a revocation reached stays dead.
   */
  async adopt(
    storage: DurableObjectStorage,
    log: AuditLog,
    tombstoned: boolean,
    record: CapRecord,
    audit: AuditRow[],
  ): Promise<Result<AdoptOutcome>> {
    const existing = await storage.get<CapRecord>(RECORD);
    if (existing) return existing.reissuedFrom === record.reissuedFrom ? ok("exists") : refuse("capExists");
    if (tombstoned) return ok("gone");
    // No await between these writes: the record, its alarm and the audit commit together.
    log.adopt(audit);
    log.record("reissue", null, ok(null), record.reissuedFrom ?? null);
    const put = storage.put(RECORD, record);
    if (record.expiresAt !== null) await Promise.all([put, storage.setAlarm(record.expiresAt)]);
    else await put;
    return ok("made");
  },

  /** Indexes a re-issued child as addChild does, without its limit (format 0 had none) and only once. */
  async adoptChild(storage: DurableObjectStorage, child: ChildRecord): Promise<null> {
    if (await storage.get(CHILD + child.id)) return null;
    const count = await storage.get<number>(CHILD_COUNT);
    const index: Record<string, unknown> = { [CHILD + child.id]: child, [orderKey(child)]: child.id };
    // A count kept is kept right; without one, countChildren builds both from the child records.
    await storage.put(typeof count === "number" ? { ...index, [CHILD_COUNT]: count + 1 } : index);
    return null;
  },

  /** Wipes a format-0 object once its cap is re-issued; any other live cap is left alone. */
  async retire(storage: DurableObjectStorage): Promise<null> {
    const cap = await storage.get(RECORD);
    if (cap !== undefined && !isFormat0Record(cap)) return null;
    await storage.deleteAll();
    await storage.deleteAlarm();
    return null;
  },
};

// ---- the registry's side ------------------------------------------------------

/** The registry's work list: `legacy:todo:<old id>`, one per format-0 cap found and not yet finished. */
const TODO = "legacy:todo:";
/** Re-issued caps whose new URL the admin has not acknowledged: `legacy:done:<old id>`. */
const DONE = "legacy:done:";
/** Where the walk of the registry's roots is: `{ after, complete }`, while a run is under way. */
const SCAN = "legacy:scan";
const ROOT_PAGE = 100;
/** Caps' new URLs handed back in one step, at most; the admin acknowledges them in the next. */
const MAX_ROWS = 100;
const ID_SHAPE = /^[a-z2-7]{16}$/;

interface TodoItem {
  old: CapRef;
  /** The new cap of its parent; null for a root, whose parent is the registry. */
  parent: CapRef | null;
  depth: number;
  /** What the old parent's index said of it (a child), to index it under the new parent; null for a root. */
  entry: Omit<ChildRecord, "id" | "key"> | null;
  /** Its new cap, once made; then its children are listed a page at a time after `after`. */
  fresh: CapRef | null;
  after: string | null;
}

interface DoneItem {
  oldKey: string;
  row: Omit<ReissuedCap, "url">;
}

interface ScanState {
  after: string | null;
  complete: boolean;
}

export interface ReissueRequest {
  /** Roots created before this time (ms) are format 0: the vault had no token key until then. */
  until: number;
  /** Old ids whose new URLs the admin has printed. */
  ack: readonly string[];
  /** Caps (or pages of children, or pages of roots) worked on in this step. */
  budget: number;
}

const unavailable = () => refuse("unavailable");

export class LegacyReissue {
  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly env: () => ObjectEnv,
  ) {}

  async step(request: ReissueRequest, origin: string): Promise<Result<ReissueStep>> {
    const acked = request.ack.filter((id) => typeof id === "string" && ID_SHAPE.test(id)).map((id) => DONE + id);
    for (const batch of chunks(acked, 128)) await this.storage.delete(batch);
    // URLs handed out but not acknowledged (an answer lost, a run cut short) go again first, unchanged.
    const unacked = await this.storage.list<DoneItem>({ prefix: DONE, limit: MAX_ROWS });
    if (unacked.size > 0) return this.answer(unacked, origin, false);

    for (let units = 0; units < request.budget; units++) {
      const next = await this.storage.list<TodoItem>({ prefix: TODO, limit: 1 });
      const [item] = next.values();
      if (item) {
        const worked = await this.work(item, request.until);
        if (!worked.ok) return worked;
        continue;
      }
      const scan = (await this.storage.get<ScanState>(SCAN)) ?? { after: null, complete: false };
      if (scan.complete) break;
      await this.scanRoots(scan, request.until);
    }
    const done = await this.storage.list<DoneItem>({ prefix: DONE, limit: MAX_ROWS });
    const todo = await this.storage.list({ prefix: TODO, limit: 1 });
    const scan = await this.storage.get<ScanState>(SCAN);
    const finished = done.size === 0 && todo.size === 0 && scan?.complete === true;
    // Finished: the next run walks the roots afresh (and finds nothing, or what was restored since).
    if (finished) await this.storage.delete(SCAN);
    return this.answer(done, origin, finished);
  }

  /** One page of the registry's roots: each of format 0 (by shape and creation time) joins the work list. */
  private async scanRoots(scan: ScanState, until: number): Promise<void> {
    const page = await this.storage.list<RegisteredRoot>({
      prefix: ROOT_KEY_PREFIX,
      limit: ROOT_PAGE,
      ...(scan.after === null ? {} : { startAfter: scan.after }),
    });
    const found = [...page.values()].filter((r) => r.reissuedFrom === undefined && r.createdAt < until);
    await this.enqueue(
      found.map((r) => ({
        old: { id: r.id, key: r.key },
        parent: null,
        depth: 0,
        entry: null,
        fresh: null,
        after: null,
      })),
    );
    const last = [...page.keys()].at(-1);
    await this.storage.put(SCAN, {
      after: last ?? scan.after,
      complete: page.size < ROOT_PAGE,
    } satisfies ScanState);
  }

  /** Adds caps to the work list, leaving any already there (and their progress) as they are. */
  private async enqueue(items: TodoItem[]): Promise<void> {
    for (const batch of chunks(items, 128)) {
      const there = await this.storage.get(batch.map((i) => TODO + i.old.id));
      const fresh = batch.filter((i) => !there.has(TODO + i.old.id));
      if (fresh.length > 0) await this.storage.put(Object.fromEntries(fresh.map((i) => [TODO + i.old.id, i])));
    }
  }

  /**
   * One unit of work on one cap: make its new cap, or list a page of its
   * children onto the work list, or (all listed) wipe the old object. Each
   * part can be repeated: the new object takes its record once, the new
   * parent indexes a child once, and the work list keeps what is there.
   */
  private async work(item: TodoItem, until: number): Promise<Result<null>> {
    const old = capObjectStub(this.env(), item.old.key);
    if (item.fresh === null) {
      const found = await old.legacyRecord().catch(unavailable);
      if (!found.ok) return found;
      const { record, audit } = found.value;
      const notOurs =
        record === null ||
        (record.expiresAt !== null && record.expiresAt <= Date.now()) ||
        (item.parent === null && !(record.createdAt < until));
      // Dead, expired, or newer than format 0: not the re-issue's to touch.
      if (notOurs) return this.drop(item);
      const token = await reissuedToken(this.env().CAPVAULT_TOKEN_KEY, item.old.key);
      if (!token.ok) return token;
      const { key, id } = await digestToken(token.value);
      const reissued: CapRecord = {
        ...record,
        id,
        key,
        parent: item.parent,
        depth: item.depth,
        reissuedFrom: record.id,
      };
      const adopted = await capObjectStub(this.env(), key).adoptReissued(reissued, audit).catch(unavailable);
      if (!adopted.ok) return adopted;
      if (adopted.value === "gone") {
        // Its new cap was revoked after an earlier step handed it out: the old one goes too.
        await old.retireLegacy().catch(() => null);
        return this.drop(item);
      }
      if (item.parent && item.entry) {
        const indexed = await capObjectStub(this.env(), item.parent.key)
          .adoptReissuedChild({ ...item.entry, id, key })
          .then(ok, unavailable);
        if (!indexed.ok) return indexed;
      } else {
        await this.replaceRoot(item.old.id, { id, key });
      }
      await this.storage.put(TODO + item.old.id, { ...item, fresh: { id, key } } satisfies TodoItem);
      return ok(null);
    }
    const page = await old.legacyChildren(item.after).catch(unavailable);
    if (!page.ok) return page;
    const { children, cursor } = page.value;
    await this.enqueue(
      children.map(({ id, key, ...entry }) => ({
        old: { id, key },
        parent: item.fresh,
        depth: item.depth + 1,
        entry,
        fresh: null,
        after: null,
      })),
    );
    if (cursor !== null) {
      await this.storage.put(TODO + item.old.id, { ...item, after: cursor } satisfies TodoItem);
      return ok(null);
    }
    // Every child is on the work list (or done): the old object can go.
    const retired = await old.retireLegacy().then(ok, unavailable);
    if (!retired.ok) return retired;
    const done: DoneItem = {
      oldKey: item.old.key,
      row: { oldId: item.old.id, id: item.fresh.id, label: null, parent: item.parent?.id ?? null, depth: item.depth },
    };
    const label = item.entry?.label ?? (await this.storage.get<RegisteredRoot>(ROOT_KEY_PREFIX + item.fresh.id))?.label;
    done.row.label = typeof label === "string" ? label : null;
    // One commit: the cap leaves the work list as its URL is kept for the admin.
    await Promise.all([this.storage.put(DONE + item.old.id, done), this.storage.delete(TODO + item.old.id)]);
    return ok(null);
  }

  /** The registry's entry moves to the new id, with what it said (label, backend, prefix, rights, times). */
  private async replaceRoot(oldId: string, fresh: CapRef): Promise<void> {
    const entry = await this.storage.get<RegisteredRoot>(ROOT_KEY_PREFIX + oldId);
    if (!entry) return;
    await Promise.all([
      this.storage.put(ROOT_KEY_PREFIX + fresh.id, { ...entry, ...fresh, reissuedFrom: oldId }),
      this.storage.delete(ROOT_KEY_PREFIX + oldId),
    ]);
  }

  private async drop(item: TodoItem): Promise<Result<null>> {
    await this.storage.delete(TODO + item.old.id);
    return ok(null);
  }

  private async answer(done: Map<string, DoneItem>, origin: string, finished: boolean): Promise<Result<ReissueStep>> {
    const reissued: ReissuedCap[] = [];
    for (const { oldKey, row } of done.values()) {
      const token = await reissuedToken(this.env().CAPVAULT_TOKEN_KEY, oldKey);
      if (!token.ok) return token;
      reissued.push({ ...row, url: `${origin}/object/${token.value}` });
    }
    return ok({ reissued, done: finished });
  }
}
