/**
 * CapStore's filters and orders, kept to what InMemoryStore
 * (@langchain/langgraph-checkpoint 1.2) does, so a graph moved from one store
 * to the other finds the same items: its filter operators, its namespace
 * match conditions and its namespace sort. The plain-text `query` match is
 * CapStore's own (InMemoryStore without an index ignores a query).
 */
import type { MatchCondition } from "@langchain/langgraph-checkpoint";

const OPERATORS = new Set(["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in", "$nin"]);

/**
 * A filter on top-level value fields, as InMemoryStore judges it: a plain
 * value by `===` (so an object or array in a filter never matches, and `{}` of
 * operators matches anything), operators with their numeric coercions.
 */
export function matchesFilter(value: Record<string, unknown>, filter: Record<string, unknown>): boolean {
  return Object.entries(filter).every(([field, wanted]) => compare(value[field], wanted));
}

function compare(actual: unknown, wanted: unknown): boolean {
  if (typeof wanted !== "object" || wanted === null || !Object.keys(wanted).every((k) => OPERATORS.has(k)))
    return actual === wanted;
  return Object.entries(wanted).every(([op, operand]) => {
    switch (op) {
      case "$eq":
        return actual === operand;
      case "$ne":
        return actual !== operand;
      case "$gt":
        return Number(actual) > Number(operand);
      case "$gte":
        return Number(actual) >= Number(operand);
      case "$lt":
        return Number(actual) < Number(operand);
      case "$lte":
        return Number(actual) <= Number(operand);
      case "$in":
        return Array.isArray(operand) ? operand.includes(actual) : false;
      case "$nin":
        return Array.isArray(operand) ? !operand.includes(actual) : true;
      default:
        return false;
    }
  });
}

/** The words of a query, lowercased; none for a blank one (no query). */
export function queryWords(query: string | undefined): string[] {
  return (query ?? "").toLowerCase().split(/\s+/u).filter(Boolean);
}

/**
 * Whether every word of the query is in the value's text: its strings,
 * numbers and booleans at any depth (not its field names), case-insensitively.
 * A plain substring match, not a ranking: honest about what it is.
 */
export function matchesQuery(value: unknown, words: readonly string[]): boolean {
  if (words.length === 0) return true;
  const texts: string[] = [];
  const walk = (v: unknown) => {
    if (typeof v === "string") texts.push(v.toLowerCase());
    else if (typeof v === "number" || typeof v === "boolean") texts.push(String(v));
    else if (Array.isArray(v)) for (const item of v) walk(item);
    else if (typeof v === "object" && v !== null) for (const item of Object.values(v)) walk(item);
  };
  walk(value);
  const text = texts.join("\n");
  return words.every((word) => text.includes(word));
}

/** A prefix or suffix condition, `*` matching any one label, as InMemoryStore matches them. */
export function matchesCondition(namespace: readonly string[], condition: MatchCondition): boolean {
  const { matchType, path } = condition;
  if (matchType !== "prefix" && matchType !== "suffix") throw new Error(`Unsupported match type: ${matchType}`);
  if (path.length > namespace.length) return false;
  const start = matchType === "prefix" ? 0 : namespace.length - path.length;
  return path.every((label, i) => label === "*" || namespace[start + i] === label);
}

/**
 * InMemoryStore's namespace order (labels joined by `:`, `localeCompare`),
 * with code-unit order where the locale calls two different names equal, so
 * the order never depends on which was written first.
 */
export function collate(a: string, b: string): number {
  return a.localeCompare(b) || (a < b ? -1 : a > b ? 1 : 0);
}

/** Namespaces as InMemoryStore's `listNamespaces` sorts them. */
export function compareNamespaces(a: readonly string[], b: readonly string[]): number {
  return collate(a.join(":"), b.join(":"));
}
