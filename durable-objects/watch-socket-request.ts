/** Who a WebSocket watcher is, as its cap's object grants it: no token, only its id, scope and clock. */
export interface SocketWatcher {
  scope: string;
  capId: string;
  expiresAt: number | null;
}

/** How the worker hands the journal a watcher its cap object granted (the journal has no public route). */
export const WATCHER_HEADER = "capvault-watcher";

export interface SocketRequest extends SocketWatcher {
  since: number | null;
}

/** The granted watcher a journal request carries, or `null` for anything else. */
export function readSocketRequest(request: Request): SocketRequest | null {
  if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") return null;
  try {
    const asked = JSON.parse(request.headers.get(WATCHER_HEADER) ?? "") as Partial<SocketRequest>;
    const { scope, capId, expiresAt, since } = asked;
    if (typeof scope !== "string" || typeof capId !== "string") return null;
    if (expiresAt !== null && typeof expiresAt !== "number") return null;
    if (since !== null && !Number.isSafeInteger(since)) return null;
    return { scope, capId, expiresAt, since: since ?? null };
  } catch {
    return null;
  }
}
