import { ok, type Result } from "../shared/result.ts";
import type { AuditEntry } from "../shared/wire-types.ts";
import { type AuditLog, KEEP_DONE, KEEP_REFUSED } from "./audit-log.ts";
import type { CapAuthorize } from "./cap-authorize.ts";
import { parseLimit } from "./list-cursor.ts";

/** Refusals worth an audit line even on read-only operations: someone tried to reach past the cap. */
export const AUDITED_REFUSALS: ReadonlySet<string> = new Set([
  "forbidden",
  "path_escapes",
  "absolute_path",
  "invalid_path",
  "outside_root",
]);

/**
 * Every operation a cap audits, and whether it mutates: a mutation leaves a
 * line whatever its outcome, a read only when refused as reaching past the cap.
 */
const AUDIT_OPS = {
  read: false,
  stat: false,
  list: false,
  versions: false,
  read_version: false,
  write: true,
  delete: true,
  move: true,
  mkdir: true,
  rmdir: true,
  redact: true,
  subdir: true,
  revoke_child: true,
} as const;

export type AuditOp = keyof typeof AUDIT_OPS;

/** The one way a cap's operations reach its audit log. */
export class CapAudit {
  constructor(
    private readonly log: AuditLog,
    private readonly gate: CapAuthorize,
  ) {}

  /**
   * Runs an operation and writes its audit line: every mutation, and every
   * refusal that shows someone reaching past the cap. `child` names the cap
   * a successful operation made or revoked.
   */
  async run<T>(
    op: AuditOp,
    target: string | null,
    work: () => Promise<Result<T>>,
    child?: (value: T) => string,
  ): Promise<Result<T>> {
    const result = await work();
    if (!result.ok && result.error.code === "no_such_cap") return result;
    // Most reads leave no line: no storage read for them.
    if (!AUDIT_OPS[op] && (result.ok || !AUDITED_REFUSALS.has(result.error.code))) return result;
    // Revoked while the operation ran: a dead cap keeps no log.
    if (!(await this.gate.live())) return result;
    this.log.record(op, target, result, result.ok && child ? child(result.value) : null);
    return result;
  }

  /** The newest audit lines of this cap, newest first. Needs no right: it is the holder's own history. */
  async trail(rawLimit: string | null): Promise<Result<{ entries: AuditEntry[] }>> {
    const admitted = await this.gate.authorize({ rights: [] });
    if (!admitted.ok) return admitted;
    // Every kept line fits in one answer.
    const limit = parseLimit(rawLimit, KEEP_DONE + KEEP_REFUSED);
    if (!limit.ok) return limit;
    return ok({ entries: this.log.recent(limit.value) });
  }
}
