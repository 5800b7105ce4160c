/** Display helpers: sizes, times, paths. Pure, so they read the same everywhere. */

export function size(bytes: number | undefined): string {
  if (bytes === undefined) return "";
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

export function when(iso: string | null | undefined): string {
  if (!iso) return "";
  return new Date(iso).toLocaleString();
}

const STEPS: [Intl.RelativeTimeFormatUnit, number][] = [
  ["day", 86400],
  ["hour", 3600],
  ["minute", 60],
  ["second", 1],
];

/**
 * "in 59 minutes", "3 days ago": for expiries, next to the absolute time. A
 * unit is used from where the next smaller one would round up to it, so a
 * one-hour cap opened a second after minting reads "in 1 hour", never "in 60
 * minutes" (and 23 h 40 min reads "tomorrow"). A time that is no date reads
 * as nothing, rather than throwing in the page.
 *
 * @example
 * relative("2026-12-01T13:00:00Z", Date.parse("2026-12-01T12:00:01Z")) // "in 1 hour"
 */
export function relative(iso: string, now = Date.now()): string {
  const seconds = Math.round((Date.parse(iso) - now) / 1000);
  if (!Number.isFinite(seconds)) return "";
  const at = STEPS.findIndex(([, span], i) => Math.abs(seconds) >= span - (STEPS[i + 1]?.[1] ?? 0) / 2);
  const [unit, span] = STEPS[at] ?? ["second", 1];
  return new Intl.RelativeTimeFormat("en", { numeric: "auto" }).format(Math.round(seconds / span), unit);
}

export function expiry(iso: string | null): string {
  return iso === null ? "never expires" : `expires ${relative(iso)} (${when(iso)})`;
}

/** A path below the cap's root: `""` is the root itself. */
export function join(dir: string, name: string): string {
  return dir === "" ? name : `${dir}/${name}`;
}

/** The cap's root and the folders down to `dir`, for breadcrumbs. */
export function crumbs(dir: string): { name: string; path: string }[] {
  const out = [{ name: "root", path: "" }];
  let path = "";
  for (const part of dir === "" ? [] : dir.split("/")) {
    path = join(path, part);
    out.push({ name: part, path });
  }
  return out;
}
