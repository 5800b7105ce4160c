import type { VersionPage, WriteResult } from "../../shared/wire-types.ts";
import { pathParam } from "./fs-cap-files.ts";
import type { ListPageOptions } from "./types.ts";
import type { VaultTransport } from "./vault-transport.ts";

/** What a restore answers: the new version's size and hashes, and the cap-relative path it wrote. */
export type Restored = Omit<WriteResult, "created"> & { path: string };

const versionUrl = (base: string, id: string) => `${base}/versions/${encodeURIComponent(id)}`;

export async function versionsPage(
  http: VaultTransport,
  base: string,
  path: string,
  options: ListPageOptions,
): Promise<VersionPage> {
  const response = await http.send({
    method: "GET",
    url: `${base}/versions`,
    query: { path: pathParam(path), cursor: options.cursor, limit: options.limit },
    expect: [200],
  });
  return http.json<VersionPage>(response);
}

export async function versionBytes(http: VaultTransport, base: string, id: string): Promise<Uint8Array> {
  const response = await http.send({ method: "GET", url: versionUrl(base, id), expect: [200] });
  return new Uint8Array(await response.arrayBuffer());
}

export async function restoreVersion(http: VaultTransport, base: string, id: string): Promise<Restored> {
  const response = await http.send({ method: "POST", url: `${versionUrl(base, id)}/restore`, expect: [200] });
  return http.json<Restored>(response);
}

export async function redactVersion(http: VaultTransport, base: string, id: string): Promise<void> {
  const response = await http.send({ method: "POST", url: `${versionUrl(base, id)}/redact`, expect: [204] });
  await response.body?.cancel();
}
