import { parseRights, RIGHTS, type Right } from "../shared/rights.ts";
import { UsageError } from "./usage-error.ts";

/**
 * `--rights read,list` → ["read", "list"]. Checked here with the vault's own
 * parser so a typo is a usage error (exit 2) instead of a refused call.
 */
export function rightsOption(value: string | boolean | undefined, command: string): Right[] | undefined {
  if (value === undefined) return undefined;
  const items = String(value)
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  const parsed = parseRights(items);
  if (!parsed.ok || items.length === 0) {
    throw new UsageError(`--rights takes a comma-separated list of ${RIGHTS.join(", ")} (no repeats)`, command);
  }
  return parsed.value;
}

/** A whole number ≥ 1 (seconds, counts). */
export function positiveIntOption(
  name: string,
  value: string | boolean | undefined,
  command: string,
): number | undefined {
  if (value === undefined) return undefined;
  const text = String(value);
  if (!/^\d+$/.test(text) || Number(text) < 1 || !Number.isSafeInteger(Number(text))) {
    throw new UsageError(`--${name} takes a whole number of at least 1`, command);
  }
  return Number(text);
}

export function stringOption(value: string | boolean | undefined): string | undefined {
  return typeof value === "string" ? value : undefined;
}

/**
 * Checks the positional count after the cap was taken, naming what is
 * missing or extra. Typed as a tuple: required names give `string`,
 * optional ones `string | undefined`.
 */
export function positionalArgs<const R extends readonly string[], const O extends readonly string[] = []>(
  rest: readonly string[],
  names: { required: R; optional?: O },
  command: string,
): [...{ [K in keyof R]: string }, ...{ [K in keyof O]: string | undefined }] {
  const optional: readonly string[] = names.optional ?? [];
  if (rest.length < names.required.length) {
    throw new UsageError(`missing ${names.required.slice(rest.length).join(" and ")}`, command);
  }
  if (rest.length > names.required.length + optional.length) {
    const expected = [...names.required, ...optional.map((n) => `[${n}]`)].join(" ") || "none";
    throw new UsageError(`too many arguments (expected ${expected})`, command);
  }
  return [...rest] as [...{ [K in keyof R]: string }, ...{ [K in keyof O]: string | undefined }];
}
