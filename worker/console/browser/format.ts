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

/**
 * An upload's progress: percent, and once a second of it has passed, the time
 * left at the rate so far.
 *
 * @example
 * progressText(5, 10, 2000) // "50% · 2 s left"
 */
export function progressText(loaded: number, total: number, elapsedMs: number): string {
  const percent = total > 0 ? Math.floor((loaded / total) * 100) : 0;
  if (elapsedMs < 1000 || loaded <= 0 || loaded >= total) return `${percent}%`;
  const left = Math.ceil(((total - loaded) / loaded) * (elapsedMs / 1000));
  return `${percent}% · ${left < 60 ? `${left} s` : `${Math.ceil(left / 60)} min`} left`;
}

/** What the cap's subtree holds, against its quota where it has one. */
export function usageText(
  usage: { bytes: number; files: number },
  limits: { maxBytes: number | null; maxFiles: number | null },
): string {
  const bytes = limits.maxBytes === null ? size(usage.bytes) : `${size(usage.bytes)} of ${size(limits.maxBytes)}`;
  const count = usage.files === 1 ? "1 file" : `${usage.files} files`;
  const files = limits.maxFiles === null ? count : `${count} of ${limits.maxFiles}`;
  const quota = limits.maxBytes === null && limits.maxFiles === null ? " (no quota)" : "";
  return `${bytes}, ${files}${quota}`;
}
