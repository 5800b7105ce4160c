import { refuse } from "./refusals.ts";
import { ok, type Result } from "./result.ts";

/** A subtree's quota: `null` where unlimited. */
export interface Limits {
  maxBytes: number | null;
  maxFiles: number | null;
}

/** What a subtree holds: bytes of live files plus kept superseded versions, and live files. */
export interface Usage {
  bytes: number;
  files: number;
}

/**
 * One limit of a cap's chain: the subtree it governs (a prefix relative to
 * the root's level 0, `""` or ending in `/`, as the root's journal names
 * paths) and its limits. A cap carries its whole chain (its own rule and its
 * ancestors'), so a write is judged on the record alone, never by asking up
 * the delegation tree.
 */
export interface QuotaRule extends Limits {
  prefix: string;
}

export const NO_LIMITS: Limits = { maxBytes: null, maxFiles: null };

/** The quota fields of a mint request (`maxBytes`, `maxFiles`); absent or null means no limit of its own. */
export function parseLimits(fields: Record<string, unknown>): Result<Limits> {
  const { maxBytes = null, maxFiles = null } = fields;
  if (maxBytes !== null && !isCount(maxBytes)) return refuse("maxBytesRange", { max: Number.MAX_SAFE_INTEGER });
  if (maxFiles !== null && !isCount(maxFiles)) return refuse("maxFilesRange", { max: Number.MAX_SAFE_INTEGER });
  return ok({ maxBytes: maxBytes as number | null, maxFiles: maxFiles as number | null });
}

/** The tightest of each limit along a chain: what the cap may use at most. */
export function effectiveLimits(chain: readonly QuotaRule[] | undefined): Limits {
  let { maxBytes, maxFiles } = NO_LIMITS;
  for (const rule of chain ?? []) {
    maxBytes = tighter(maxBytes, rule.maxBytes);
    maxFiles = tighter(maxFiles, rule.maxFiles);
  }
  return { maxBytes, maxFiles };
}

/**
 * A child's chain: its parent's, plus its own rule at `prefix` when it asks
 * for limits. A limit looser than the parent's effective one is refused, not
 * clamped: a silently different quota is a surprise that shows up only when a
 * write fails. A child may set a limit its parent lacks. A rule at the
 * parent's own prefix (a same-root child) merges with it, so a chain holds at
 * most one rule per path depth however long the delegation line.
 */
export function childChain(parent: readonly QuotaRule[] | undefined, prefix: string, own: Limits): Result<QuotaRule[]> {
  const chain = [...(parent ?? [])];
  const inherited = effectiveLimits(chain);
  if (looser(own.maxBytes, inherited.maxBytes) || looser(own.maxFiles, inherited.maxFiles))
    return refuse("quotaLooser");
  if (own.maxBytes === null && own.maxFiles === null) return ok(chain);
  const last = chain.at(-1);
  if (last?.prefix === prefix) {
    chain[chain.length - 1] = {
      prefix,
      maxBytes: tighter(last.maxBytes, own.maxBytes),
      maxFiles: tighter(last.maxFiles, own.maxFiles),
    };
  } else chain.push({ prefix, ...own });
  return ok(chain);
}

/** The subtrees a path lies in, outermost first: `""`, then each folder prefix (`a/`, `a/b/`). */
export function enclosingPrefixes(path: string): string[] {
  const prefixes = [""];
  for (let i = path.indexOf("/"); i !== -1; i = path.indexOf("/", i + 1)) prefixes.push(path.slice(0, i + 1));
  return prefixes;
}

export function underPrefix(prefix: string, path: string): boolean {
  return path.startsWith(prefix);
}

function isCount(value: unknown): boolean {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

function tighter(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null ? a : Math.min(a, b);
}

function looser(own: number | null, inherited: number | null): boolean {
  return own !== null && inherited !== null && own > inherited;
}
