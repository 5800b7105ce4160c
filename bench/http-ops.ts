/** Small HTTP calls the sections time. Each reads the whole answer and throws on a failure, so a broken path cannot pass for a fast one. */

export async function ok(res: Response | Promise<Response>, what: string): Promise<void> {
  const answer = await res;
  await answer.arrayBuffer();
  if (!answer.ok) throw new Error(`${what}: HTTP ${answer.status}`);
}

/** Requests sent again because a pooled connection had been closed by the server before it answered. */
export let resent = 0;

/**
 * `fetch`, sent again (up to 3 times) if it failed on a kept-alive connection
 * the server had closed before answering ("other side closed"): what browsers do for
 * idempotent requests, and every call here is one (reads, and writes of the
 * same bytes). A server that is down fails the second try too.
 */
async function send(url: string, init?: RequestInit): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fetch(url, init);
    } catch (error) {
      const code = ((error as Error).cause as { code?: string } | undefined)?.code;
      // The pool may hold several such connections; a few tries reach a live one or a new one.
      if ((code !== "UND_ERR_SOCKET" && code !== "ECONNRESET") || attempt === 4) throw error;
      resent++;
    }
  }
}

export const KIB = new Uint8Array(1024).fill(0x61);

export const get = (url: string) => ok(send(url), `GET ${new URL(url).pathname}`);
export const head = (url: string) => ok(send(url, { method: "HEAD" }), `HEAD ${new URL(url).pathname}`);
export const put = (url: string, body: Uint8Array = KIB) =>
  ok(send(url, { method: "PUT", body }), `PUT ${new URL(url).pathname}`);

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
  const res = await send(`${capUrl}/subdir`, { method: "POST", body: JSON.stringify({ path }) });
  const body = (await res.json()) as { url?: string };
  if (res.status !== 201 || !body.url) throw new Error(`subdir: HTTP ${res.status}`);
  return body.url;
}
