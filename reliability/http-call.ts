import { request as httpRequest } from "node:http";

/**
 * One bounded HTTP exchange that never throws: every request the reliability
 * run sends has a deadline, and what came back (or why nothing did) is data
 * for the checks, not an exception that would end the run.
 */
export interface Observed {
  /** 0 when no response arrived (connection error or deadline). */
  status: number;
  headers: [string, string][];
  body: Uint8Array;
  /** Why no complete response arrived. */
  error?: string;
}

export const DEFAULT_TIMEOUT_MS = 30_000;

export async function call(url: string, init: RequestInit = {}, timeoutMs = DEFAULT_TIMEOUT_MS): Promise<Observed> {
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const response = await fetch(url, { ...init, signal, redirect: "manual" });
    const headers = [...response.headers];
    try {
      return { status: response.status, headers, body: new Uint8Array(await response.arrayBuffer()) };
    } catch (error) {
      return { status: response.status, headers, body: new Uint8Array(), error: `body: ${describe(error)}` };
    }
  } catch (error) {
    return { status: 0, headers: [], body: new Uint8Array(), error: describe(error) };
  }
}

export function text(observed: Observed): string {
  return new TextDecoder().decode(observed.body);
}

export function json(observed: Observed): unknown {
  try {
    return JSON.parse(text(observed));
  } catch {
    return undefined;
  }
}

export function header(observed: Observed, name: string): string | null {
  return observed.headers.find(([key]) => key === name.toLowerCase())?.[1] ?? null;
}

export function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause = (error as { cause?: unknown }).cause;
    return cause instanceof Error
      ? `${error.name}: ${error.message} (${cause.message})`
      : `${error.name}: ${error.message}`;
  }
  return String(error);
}

/**
 * The same exchange on a connection of its own (no pooling): a resend after a
 * pooled connection was closed under a request cannot meet that again.
 */
export function callFresh(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string | Uint8Array } = {},
  timeoutMs = DEFAULT_TIMEOUT_MS,
): Promise<Observed> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = (observed: Observed) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request?.destroy();
      resolve(observed);
    };
    let request: ReturnType<typeof httpRequest>;
    const timer = setTimeout(
      () => finish({ status: 0, headers: [], body: new Uint8Array(), error: "deadline" }),
      timeoutMs,
    );
    try {
      request = httpRequest(
        url,
        { method: init.method ?? "GET", headers: init.headers ?? {}, agent: false },
        (response) => {
          const headers = Object.entries(response.headers).map(([k, v]): [string, string] => [
            k,
            Array.isArray(v) ? v.join(", ") : (v ?? ""),
          ]);
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("end", () =>
            finish({ status: response.statusCode ?? 0, headers, body: new Uint8Array(Buffer.concat(chunks)) }),
          );
          response.on("error", (error) =>
            finish({
              status: response.statusCode ?? 0,
              headers,
              body: new Uint8Array(Buffer.concat(chunks)),
              error: `body: ${describe(error)}`,
            }),
          );
        },
      );
    } catch (error) {
      // A header value node:http will not send (fetch may): nothing was sent.
      return finish({ status: 0, headers: [], body: new Uint8Array(), error: `not sent: ${describe(error)}` });
    }
    request.on("error", (error) => finish({ status: 0, headers: [], body: new Uint8Array(), error: describe(error) }));
    request.end(init.body === undefined ? undefined : Buffer.from(init.body));
  });
}
