import { echoedName, refuse } from "../shared/refusals.ts";
import { ok, type Result } from "../shared/result.ts";

/**
 * Reads query parameters strictly: each decoded exactly once, with invalid
 * percent-encoding (including encoded lone surrogates) refused rather than
 * passed through as literal text, and a repeated parameter refused rather
 * than silently resolved. Two spellings must never reach one name.
 */
export function readQuery(url: string, names: readonly string[]): Result<Record<string, string | null>> {
  const out: Record<string, string | null> = Object.fromEntries(names.map((n) => [n, null]));
  const search = new URL(url).search.slice(1);
  if (search === "") return ok(out);
  for (const pair of search.split("&")) {
    if (pair === "") continue;
    const eq = pair.indexOf("=");
    const rawName = eq === -1 ? pair : pair.slice(0, eq);
    const rawValue = eq === -1 ? "" : pair.slice(eq + 1);
    let name: string;
    let value: string;
    try {
      name = decodeURIComponent(rawName.replaceAll("+", " "));
      value = decodeURIComponent(rawValue.replaceAll("+", " "));
    } catch {
      return refuse(rawName === "path" ? "badPathEncoding" : "badQueryEncoding");
    }
    if (!names.includes(name)) continue;
    if (out[name] !== null) return refuse("repeatedQuery", { name: echoedName(name) });
    out[name] = value;
  }
  return ok(out);
}
