import { UsageError } from "./usage-error.ts";

const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 };
/** `90` (seconds, as before), or units that may be combined: `30m`, `1h`, `7d`, `1h30m`. */
const SHAPE = /^(?:\d+|(?:\d+[smhdw])+)$/;

/**
 * A TTL as people write it, in whole seconds, or `null` when it is not one.
 * Zero is refused: a cap that expires as it is minted is a typo, not a wish.
 */
export function parseDuration(text: string): number | null {
  if (!SHAPE.test(text)) return null;
  let seconds = 0;
  if (/^\d+$/.test(text)) seconds = Number(text);
  else for (const [, count, unit] of text.matchAll(/(\d+)([smhdw])/g)) seconds += Number(count) * UNIT_SECONDS[unit!]!;
  return seconds >= 1 && Number.isSafeInteger(seconds) ? seconds : null;
}

/** `--ttl 30m` → 1800; a usage error (exit 2, nothing sent) for anything else. */
export function durationOption(name: string, value: string | boolean | undefined, command: string): number | undefined {
  if (value === undefined) return undefined;
  const seconds = parseDuration(String(value));
  if (seconds === null) {
    throw new UsageError(`--${name} takes a duration of at least 1s: 3600, 90s, 30m, 1h, 7d, 2w or 1h30m`, command);
  }
  return seconds;
}
