/**
 * Small HTTP calls the sections time, over the lean keep-alive client
 * (lean-http.ts). Each reads the whole answer and throws on a failure, so a
 * broken path cannot pass for a fast one.
 */
import { lean, leanOk } from "./lean-http.ts";

export { resent } from "./lean-http.ts";

export const KIB = new Uint8Array(1024).fill(0x61);

export const get = (url: string) => leanOk(url).then(() => undefined);
export const head = (url: string) => leanOk(url, { method: "HEAD" }).then(() => undefined);
export const put = (url: string, body: Uint8Array = KIB) => leanOk(url, { method: "PUT", body }).then(() => undefined);

/** A GET through `fetch` (undici), for the one row that shows what `fetch` users see. */
export async function fetchGet(url: string): Promise<void> {
  const res = await fetch(url);
  await res.arrayBuffer();
  if (!res.ok) throw new Error(`GET ${new URL(url).pathname}: HTTP ${res.status}`);
}

/** A 1 KiB file through a cap and its floor: the same name on both sides. */
export interface FileEndpoints {
  cap: (name: string) => string;
  floor: (name: string) => string;
}

/** Endpoints of the R2 cap (root prefix `default/`) and the R2 floor worker, for one bucket key. */
export function r2Endpoints(capUrl: string, floorUrl: string, prefix = "default/"): FileEndpoints {
  return {
    cap: (name) => `${capUrl}/file?path=${encodeURIComponent(name)}`,
    floor: (name) => `${floorUrl}/?key=${encodeURIComponent(prefix + name)}`,
  };
}

/** Endpoints of the disk cap and the plain node fs server over the same folder. */
export function diskEndpoints(capUrl: string, floorUrl: string): FileEndpoints {
  return {
    cap: (name) => `${capUrl}/file?path=${encodeURIComponent(name)}`,
    floor: (name) => `${floorUrl}/file?path=${encodeURIComponent(name)}`,
  };
}

/** Mints a child of `capUrl` over `path` (same rights) and returns its URL. A resend may mint one spare child. */
export async function mintChild(capUrl: string, path = ""): Promise<string> {
  const res = await lean(`${capUrl}/subdir`, { method: "POST", body: JSON.stringify({ path }) });
  const body = (res.status === 201 ? JSON.parse(res.body.toString("utf8")) : {}) as { url?: string };
  if (!body.url) throw new Error(`subdir: HTTP ${res.status}`);
  return body.url;
}
