import type { FolderCount, FolderDeleted, LinesPage } from "../../shared/wire-types.ts";
import { pathParam } from "./fs-cap-files.ts";
import type { VaultTransport } from "./vault-transport.ts";

/** What {@link FsCap.readLines} takes besides the path; see `GET /lines` in docs/api.md. */
export interface LinesOptions {
  /** The first line returned, 1-based (default 1). */
  offset?: number;
  /** Most lines returned, 1 to 2,000 (default 2,000); a window also ends at 1 MiB of text. */
  limit?: number;
}

/** `DELETE /folder?recursive=true`: what was deleted. */
export async function removeTreeCall(http: VaultTransport, base: string, path: string): Promise<FolderCount> {
  const response = await http.send({
    method: "DELETE",
    url: `${base}/folder`,
    query: { path: pathParam(path), recursive: "true" },
    expect: [200],
  });
  return (await http.json<FolderDeleted>(response)).deleted;
}

/** `GET /lines`: one window of a text file's lines. */
export async function linesPage(
  http: VaultTransport,
  base: string,
  path: string,
  options: LinesOptions,
): Promise<LinesPage> {
  const response = await http.send({
    method: "GET",
    url: `${base}/lines`,
    query: { path: pathParam(path), offset: options.offset, limit: options.limit },
    expect: [200],
  });
  return http.json<LinesPage>(response);
}
