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
    return cause instanceof Error ? `${error.name}: ${error.message} (${cause.message})` : `${error.name}: ${error.message}`;
  }
  return String(error);
}
