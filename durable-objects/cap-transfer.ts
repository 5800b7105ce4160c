import { refuse } from "../shared/refusals.ts";
import { ok, type Result } from "../shared/result.ts";
import type { AuditLog } from "./audit-log.ts";
import { type CapAuthorize, RECORD } from "./cap-authorize.ts";
import type { CapHost } from "./cap-host.ts";
import type { CapRecord, ChildRecord } from "./cap-record.ts";
import type { CapRevocation } from "./cap-revocation.ts";
import { CHILD, CHILD_COUNT, chunks, MAX_CHILDREN, orderKey } from "./child-index.ts";
import { type CapExport, checkCapExport, checkCapPage, MAX_AUDIT_ROWS } from "./import-check.ts";
import { stampFormat } from "./state-migrations.ts";

/**
 * Where an imported cap's record waits until the import commits. The gate
 * (cap-authorize.ts) reads only {@link RECORD}, so a staged cap answers as an
 * unknown one: nothing of an import is reachable before its commit.
 */
export const STAGED_RECORD = "import:cap";
/** The holder-binding replay mark's key (holder-binding.ts). */
const HOLDER_MARK = "holder-admitted-until";

/**
 * A cap's part of a vault export and import (docs/export-import.md): its
 * record, children and audit read in one call (one consistent moment), and
 * written back staged, then made live by the registry's commit.
 */
export class CapTransfer {
  constructor(
    private readonly host: CapHost,
    private readonly gate: CapAuthorize,
    private readonly log: AuditLog,
    private readonly revocation: CapRevocation,
  ) {}

  /** The live cap's state, or null for a dead or unknown one (nothing to carry). */
  async exportState(): Promise<Result<CapExport | null>> {
    const record = await this.gate.live();
    if (!record) return ok(null);
    // Storage reads only: the input gate stays shut, so record, children and audit are one moment.
    const children = await this.host.storage.list<ChildRecord>({ prefix: CHILD, limit: MAX_CHILDREN + 1 });
    const holderMark = (await this.host.storage.get<number>(HOLDER_MARK)) ?? null;
    return ok({ record, children: [...children.values()], audit: this.log.rows(), holderMark });
  }

  /**
   * Stores an imported cap, not live: its children, audit and replay mark,
   * and its record under {@link STAGED_RECORD}. A re-run of the same archive
   * stages it again; a live cap or a revoked one (a tombstone) under this
   * key is a collision, and nothing is written.
   */
  async stage(raw: unknown): Promise<Result<"staged" | "live">> {
    const checked = checkCapExport(raw);
    if (!checked.ok) return checked;
    const { record, children, audit, holderMark } = checked.value;
    const live = await this.host.storage.get<CapRecord>(RECORD);
    if (live) return live.id === record.id && live.createdAt === record.createdAt ? ok("live") : refuse("capExists");
    if (await this.revocation.tombstoned()) return refuse("importCollision");
    const existing = await this.host.storage.list({ prefix: CHILD, limit: 1 });
    const staged = await this.host.storage.get(STAGED_RECORD);
    if (existing.size > 0 && !staged) return refuse("importCollision");
    // An object that woke empty has no format yet: the first write says which, as a mint's does.
    stampFormat(this.host.storage, "cap");
    const entries = childEntries(children);
    entries[CHILD_COUNT] = children.length;
    if (holderMark !== null) entries[HOLDER_MARK] = holderMark;
    await this.putAll(entries);
    // Replaced, not appended: a re-run of the same archive leaves one copy.
    this.log.clear();
    this.log.adopt(audit);
    // Last: only a fully staged cap is one the commit may make live.
    await this.host.storage.put(STAGED_RECORD, record);
    return ok("staged");
  }

  /**
   * The rest of a staged cap whose whole state is more than one import call
   * holds (1,000 children with long paths and labels; 1,100 audit lines of
   * long paths): its children added to those staged, its audit lines after
   * theirs. Bounded as a whole cap is; a re-run stages the cap again first,
   * which starts its audit over.
   */
  async stagePage(raw: unknown): Promise<Result<{ children: number; audit: number }>> {
    const checked = checkCapPage(raw);
    if (!checked.ok) return checked;
    const { children, audit } = checked.value;
    if ((await this.host.storage.get(RECORD)) || !(await this.host.storage.get(STAGED_RECORD)))
      return refuse("importNotStaged");
    const held = await this.host.storage.list({ prefix: CHILD, limit: MAX_CHILDREN + 1 });
    const count = new Set([...held.keys(), ...children.map((c) => CHILD + c.id)]).size;
    const lines = this.log.size() + audit.length;
    if (count > MAX_CHILDREN || lines > MAX_AUDIT_ROWS) return refuse("importMalformed");
    await this.putAll({ ...childEntries(children), [CHILD_COUNT]: count });
    this.log.adopt(audit);
    return ok({ children: count, audit: lines });
  }

  private async putAll(entries: Record<string, unknown>): Promise<void> {
    for (const batch of chunks(Object.entries(entries), 128)) await this.host.storage.put(Object.fromEntries(batch));
  }

  /** Makes the staged cap live (the registry's commit calls it); already live, or nothing staged, is success. */
  async commit(): Promise<Result<null>> {
    const staged = await this.host.storage.get<CapRecord>(STAGED_RECORD);
    if (!staged) return ok(null);
    if (!(await this.host.storage.get(RECORD))) {
      await this.host.storage.put(RECORD, staged);
      if (staged.expiresAt !== null) await this.host.storage.setAlarm(staged.expiresAt);
    }
    await this.host.storage.delete(STAGED_RECORD);
    return ok(null);
  }
}

/** A child's record and its place in creation order (child-index.ts). */
function childEntries(children: readonly ChildRecord[]): Record<string, unknown> {
  const entries: Record<string, unknown> = {};
  for (const child of children) {
    entries[CHILD + child.id] = child;
    entries[orderKey(child)] = child.id;
  }
  return entries;
}
