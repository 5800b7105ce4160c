/**
 * The RPC tests' client side (rpc.node.test.ts, rpc-lifecycle.node.test.ts):
 * a fetch on fresh connections, the /rpc requests it saw, and refusals read
 * as `{ code, message }` the same way over RPC and over HTTP.
 */
import { Agent, WebSocket as UndiciWebSocket, fetch as undiciFetch } from "undici";

/** Every request the client made to an /rpc URL, with its answer's text. */
export const rpcRequests: { url: string; status: number; body: string }[] = [];
const realFetch = globalThis.fetch;
/**
 * Every request of these files on a connection of its own: a kept-alive
 * connection reused just as the server closes it for idling fails with
 * ECONNRESET, and a test must not depend on that race.
 */
const fresh = new Agent({ pipelining: 0 });
export const plainFetch = (async (input: string | URL | Request, init?: RequestInit) =>
  undiciFetch(input instanceof Request ? input.url : input, {
    ...init,
    dispatcher: fresh,
  } as never)) as unknown as typeof fetch;

/** Routes the global fetch through {@link plainFetch}, recording /rpc requests; gives a WebSocket to capnweb. */
export function installRpcClient(): void {
  // Node 20 has no global WebSocket; capnweb (and connectLive) use the global one.
  globalThis.WebSocket ??= UndiciWebSocket as unknown as typeof WebSocket;
  globalThis.fetch = async (input, init) => {
    const response = await plainFetch(input, init);
    const url = input instanceof Request ? input.url : String(input);
    if (url.endsWith("/rpc")) rpcRequests.push({ url, status: response.status, body: await response.clone().text() });
    return response;
  };
}

/** Gives the process its own fetch back (the fork runs other files next). */
export function uninstallRpcClient(): void {
  globalThis.fetch = realFetch;
}

/** The refusal a call gave: `{ code, message }`, as the client reads them. */
export async function refusal(promise: Promise<unknown>): Promise<{ code: unknown; message: string }> {
  const error = await promise.then(
    () => {
      throw new Error("expected a refusal, but the call succeeded");
    },
    (e: unknown) => e as Error & { code?: unknown },
  );
  return { code: error.code, message: error.message };
}

/** The HTTP refusal of the same request, `{ code, message }` from `{ error: { code, message } }`. */
export async function httpRefusal(response: Response): Promise<{ code: unknown; message: string }> {
  const body = (await response.json()) as { error: { code: string; message: string } };
  return body.error;
}

/** A raw batch: lines of capnweb messages, posted as they are. */
export function postBatch(capUrl: string, body: string): Promise<Response> {
  return plainFetch(`${capUrl}/rpc`, { method: "POST", body });
}
