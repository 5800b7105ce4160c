import type { SearchMode, SearchPage } from "../../shared/wire-types.ts";
import { pathParam } from "./fs-cap-files.ts";
import type { VaultTransport } from "./vault-transport.ts";

/** What {@link FsCap.search} takes besides the pattern; see `GET /search` in docs/api.md. */
export interface SearchOptions {
  /** The folder searched, relative to the cap's root (default: the root). */
  path?: string;
  /** Only files whose name (or, with a `/`, whose path below `path`) matches this glob. */
  glob?: string;
  /** `lines` (default): matching lines; `count`: matches per file; `files`: names of files that match. */
  mode?: SearchMode;
  /** Lines shown around each match (0 to 10), in mode `lines`. */
  context?: number;
  ignoreCase?: boolean;
  /** Most matching lines (mode lines) or files (count, files) in the page, 1 to 200. */
  limit?: number;
  /** The `cursor` of the previous page. */
  cursor?: string | null;
}

export async function searchPage(
  http: VaultTransport,
  base: string,
  pattern: string,
  options: SearchOptions,
): Promise<SearchPage> {
  const response = await http.send({
    method: "GET",
    url: `${base}/search`,
    query: {
      pattern,
      path: options.path === undefined ? undefined : pathParam(options.path),
      glob: options.glob,
      mode: options.mode,
      context: options.context,
      ignoreCase: options.ignoreCase === undefined ? undefined : String(options.ignoreCase),
      limit: options.limit,
      cursor: options.cursor ?? undefined,
    },
    expect: [200],
  });
  return http.json<SearchPage>(response);
}
