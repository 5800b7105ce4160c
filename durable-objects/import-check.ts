import { parseLimits, type QuotaRule } from "../shared/quota.ts";
import { refuse } from "../shared/refusals.ts";
import { parseRelPath } from "../shared/rel-path.ts";
import { ok, type Result } from "../shared/result.ts";
import { parseRetention } from "../shared/retention.ts";
import { parseRights } from "../shared/rights.ts";
import { base32 } from "../shared/token.ts";
import type { AuditRow } from "./audit-log.ts";
import type { CapRecord, ChildRecord } from "./cap-record.ts";
import { MAX_CHILDREN } from "./child-index.ts";
import { checkRoot } from "./path-check.ts";

/**
 * The shapes an import sends (docs/export-import.md), judged before anything
 * is stored: the admin sends them, but an archive is a file that may have been
 * edited, and a malformed record must be a 400, never a cap that breaks later.
 */

/** What one cap's object holds that an archive carries: read in one call, so one consistent moment. */
export interface CapExport {
  record: CapRecord;
  children: ChildRecord[];
  audit: AuditRow[];
  /** The holder-binding replay mark (holder-binding.ts), so a proof admitted before the export is not admitted again. */
  holderMark: number | null;
}

/** At most this many audit lines per cap (audit-log.ts keeps 1,000 done and 100 refused). */
export const MAX_AUDIT_ROWS = 1100;
const KEY_SHAPE = /^[0-9a-f]{64}$/;

type Shape = Record<string, unknown>;
const isObject = (v: unknown): v is Shape => typeof v === "object" && v !== null && !Array.isArray(v);
const isTime = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
const isTimeOrNull = (v: unknown) => v === null || isTime(v);
const isStringOrNull = (v: unknown) => v === null || typeof v === "string";

/** A cap's public id from its object's name (its token's digest): the first 80 bits, in base32. */
export function idOfKey(key: string): string {
  const bytes = new Uint8Array(10);
  for (let i = 0; i < 10; i++) bytes[i] = Number.parseInt(key.slice(i * 2, i * 2 + 2), 16);
  return base32(bytes);
}

/** A cap object's name as an import gives it: 64 hex digits (its token's digest). */
export const isCapKey = (v: unknown): v is string => typeof v === "string" && KEY_SHAPE.test(v);

/** A key and id that belong together: no import can name one cap's object with another's id. */
export function isCapRef(v: unknown): v is { id: string; key: string } {
  return isObject(v) && isCapKey(v.key) && v.id === idOfKey(v.key);
}

/** Root levels as a cap holds them: `""` or prefixes ending in `/` that parse as paths, within the key limit. */
export function isRootLevels(v: unknown): v is string[] {
  if (!Array.isArray(v) || v.length === 0 || v.length > 17) return false;
  if (!v.every((level, i) => typeof level === "string" && (level === "" ? i === 0 : level.endsWith("/")))) return false;
  const root = parseRelPath("");
  return root.ok && checkRoot(v as string[], root.value, "prefixTooLong").ok;
}

/** A chain holds at most one rule per path depth (shared/quota.ts `childChain`), and a key at most 1,024 bytes. */
const MAX_RULES = 1024;

/** A retention as a mint writes it: both fields, each in its range (an unchecked one was served as is). */
function isRetention(v: unknown): boolean {
  return isObject(v) && typeof v.keepVersions === "number" && typeof v.keepDays === "number" && parseRetention(v).ok;
}

/** A quota rule as a mint writes it; one of another shape made every call to its cap a 503. */
function isRule(v: unknown): v is QuotaRule {
  return (
    isObject(v) && typeof v.prefix === "string" && (v.prefix === "" || v.prefix.endsWith("/")) && parseLimits(v).ok
  );
}

function isRecord(v: unknown): v is CapRecord {
  if (!isCapRef(v)) return false;
  const r = v as unknown as Shape;
  return (
    (r.backend === "r2" || r.backend === "disk") &&
    isRootLevels(r.root) &&
    parseRights(r.rights).ok &&
    isStringOrNull(r.label) &&
    isTime(r.createdAt) &&
    isTimeOrNull(r.expiresAt) &&
    (r.parent === null || isCapRef(r.parent)) &&
    (r.depth === undefined || (Number.isSafeInteger(r.depth) && (r.depth as number) >= 0)) &&
    (r.retention === undefined || isRetention(r.retention)) &&
    (r.quotas === undefined || (Array.isArray(r.quotas) && r.quotas.length <= MAX_RULES && r.quotas.every(isRule))) &&
    (r.historyFrom === undefined || isTime(r.historyFrom)) &&
    (r.holder === undefined || r.holder === null || (isObject(r.holder) && typeof r.holder.jkt === "string"))
  );
}

function isChild(v: unknown): v is ChildRecord {
  if (!isCapRef(v)) return false;
  const c = v as unknown as Shape;
  return (
    isStringOrNull(c.label) &&
    typeof c.path === "string" &&
    parseRelPath(c.path).ok &&
    parseRights(c.rights).ok &&
    isTime(c.createdAt) &&
    isTimeOrNull(c.expiresAt)
  );
}

function isAuditRow(v: unknown): v is AuditRow {
  return (
    isObject(v) &&
    isTime(v.at) &&
    typeof v.op === "string" &&
    isStringOrNull(v.path) &&
    typeof v.outcome === "string" &&
    isStringOrNull(v.child) &&
    Number.isSafeInteger(v.count) &&
    (v.count as number) >= 1
  );
}

/** One cap of an archive, or `importMalformed`. */
export function checkCapExport(v: unknown): Result<CapExport> {
  if (!isObject(v) || !isRecord(v.record)) return refuse("importMalformed");
  if (!Array.isArray(v.children) || v.children.length > MAX_CHILDREN || !v.children.every(isChild))
    return refuse("importMalformed");
  if (!Array.isArray(v.audit) || v.audit.length > MAX_AUDIT_ROWS || !v.audit.every(isAuditRow))
    return refuse("importMalformed");
  if (!isTimeOrNull(v.holderMark)) return refuse("importMalformed");
  return ok(v as unknown as CapExport);
}

/** The rest of a staged cap too large for one call: more children, more audit lines (oldest first). */
export interface CapPage {
  children: ChildRecord[];
  audit: AuditRow[];
}

/** A further page of a staged cap (`POST /admin/import/cap-page`): not empty, each part within its cap's bound. */
export function checkCapPage(v: unknown): Result<CapPage> {
  if (!isObject(v)) return refuse("importMalformed");
  const { children, audit } = v;
  if (!Array.isArray(children) || children.length > MAX_CHILDREN || !children.every(isChild))
    return refuse("importMalformed");
  if (!Array.isArray(audit) || audit.length > MAX_AUDIT_ROWS || !audit.every(isAuditRow))
    return refuse("importMalformed");
  if (children.length + audit.length === 0) return refuse("importMalformed");
  return ok({ children, audit } as CapPage);
}
