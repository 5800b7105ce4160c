import { readFileSync } from "node:fs";

/** What the launcher takes from wrangler.toml: the runtime's date and flags, as `wrangler deploy` uses them. */
export interface RuntimeConfig {
  compatibilityDate: string;
  compatibilityFlags: string[];
}

/**
 * Reads `compatibility_date` and `compatibility_flags` from the top of
 * wrangler.toml, the one place they are written, so Miniflare runs the worker
 * on the runtime Cloudflare will.
 *
 * Not wrangler's own reader: importing `wrangler` took 2 s of the launcher's
 * 5.3 s start (measured with a cold start on two cores), for two keys. This
 * reads only those two, in the forms TOML gives a quoted string and an array
 * of quoted strings (both JSON there), and throws on anything else rather than
 * guess; launcher/runtime-config.test.ts checks it agrees with wrangler.
 *
 * @example
 * const { compatibilityDate, compatibilityFlags } = readRuntimeConfig("wrangler.toml");
 */
export function readRuntimeConfig(file: string): RuntimeConfig {
  const values = new Map<string, unknown>();
  for (const line of readFileSync(file, "utf8").split("\n")) {
    // Keys before the first table are the top-level ones.
    if (/^\s*\[/.test(line)) break;
    // Spelled any other way (quoted, dotted) or on several lines, the key would be missed, not misread: refuse.
    const comment = /^\s*#/.test(line);
    if (!comment && /compatibility_(date|flags)/.test(line) && !/^\s*compatibility_(date|flags)\s*=/.test(line))
      throw new Error(`${file}: write compatibility_date and compatibility_flags as bare keys, one line each`);
    const m = /^\s*(compatibility_date|compatibility_flags)\s*=\s*(.*?)\s*(#.*)?$/.exec(line);
    if (!m) continue;
    if (values.has(m[1]!)) throw new Error(`${file}: ${m[1]} is set twice`);
    try {
      values.set(m[1]!, JSON.parse(m[2]!));
    } catch {
      throw new Error(`${file}: ${m[1]} is not a quoted string or an array of them`);
    }
  }
  const date = values.get("compatibility_date");
  const flags = values.has("compatibility_flags") ? values.get("compatibility_flags") : [];
  if (typeof date !== "string" || !/^\d{4}-\d{2}-\d{2}$/.test(date)) {
    throw new Error(`${file}: compatibility_date must be "YYYY-MM-DD"`);
  }
  if (!Array.isArray(flags) || !flags.every((f) => typeof f === "string")) {
    throw new Error(`${file}: compatibility_flags must be an array of strings`);
  }
  return { compatibilityDate: date, compatibilityFlags: flags };
}
