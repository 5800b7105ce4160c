import type { CapInfo, ListPage, Stat } from "../../shared/wire-types.ts";
import { revokeResult } from "./fs-cap-delegation.ts";
import { emptyStream, pathParam } from "./fs-cap-files.ts";
import type { ListPageOptions, MoveOptions, RevokeResult } from "./types.ts";
import type { VaultTransport } from "./vault-transport.ts";

/** `GET /stat`: a file or folder's description. */
export async function statOf(http: VaultTransport, base: string, path: string): Promise<Stat> {
  const response = await http.send({
    method: "GET",
    url: `${base}/stat`,
    query: { path: pathParam(path) },
    expect: [200],
  });
  return http.json<Stat>(response);
}

/** `GET /list`: one page of a folder (a missing cursor is `null`). */
export async function listPageOf(
  http: VaultTransport,
  base: string,
  path: string,
  options: ListPageOptions,
): Promise<ListPage> {
  const response = await http.send({
    method: "GET",
    url: `${base}/list`,
    query: { path: pathParam(path), cursor: options.cursor, limit: options.limit, depth: options.depth },
    expect: [200],
  });
  const page = await http.json<ListPage>(response);
  return { entries: page.entries, cursor: page.cursor ?? null };
}

/** `POST /move` of a file or folder. */
export async function moveCall(
  http: VaultTransport,
  base: string,
  from: string,
  to: string,
  options: MoveOptions,
): Promise<void> {
  const json: Record<string, unknown> = { from: pathParam(from), to: pathParam(to) };
  if (options.overwrite !== undefined) json.overwrite = options.overwrite;
  const response = await http.send({ method: "POST", url: `${base}/move`, json, expect: [200, 204] });
  await response.body?.cancel();
}

/** `GET /watch` as an event stream after `since`. */
export async function openWatch(
  http: VaultTransport,
  base: string,
  since: string | undefined,
  signal: AbortSignal | undefined,
): Promise<ReadableStream<Uint8Array>> {
  const response = await http.send({
    method: "GET",
    url: `${base}/watch`,
    query: { since },
    headers: { accept: "text/event-stream" },
    signal,
    expect: [200],
  });
  return response.body ?? emptyStream();
}

/** `DELETE /object/<token>`: the cap and everything minted from it. */
export async function revokeCap(http: VaultTransport, base: string): Promise<RevokeResult> {
  const response = await http.send({ method: "DELETE", url: base, expect: [200, 202, 204] });
  return revokeResult(response, http);
}

/** `GET /object/<token>`: what the cap is. */
export async function infoOf(http: VaultTransport, base: string): Promise<CapInfo> {
  const response = await http.send({ method: "GET", url: base, expect: [200] });
  return http.json<CapInfo>(response);
}
