import { rootJournalStub } from "../durable-objects/object-stubs.ts";
import { WATCHER_HEADER } from "../durable-objects/watch-socket-request.ts";
import { refusal } from "../shared/refusals.ts";
import type { CapStub } from "./cap-stub.ts";
import type { Env } from "./env.ts";
import { errorResponse } from "./http-error.ts";
import { relaySocket } from "./socket-relay.ts";

/** Only the journal's binding reaches this URL; its host is never looked up. */
const JOURNAL_URL = "https://journal.internal/watch";

/**
 * `GET /watch` with `Upgrade: websocket`: the cap's object admits the watcher
 * (read, a valid `since`), the root's journal accepts the socket (hibernatable,
 * durable-objects/watch-sockets.ts), and this relays it to the client
 * (socket-relay.ts: so the client sees a close at once). Any
 * refusal is the route's usual JSON answer, never a socket.
 */
export async function watchSocket(env: Env, cap: CapStub, since: string | null): Promise<Response> {
  const grant = await cap.watchSocket(since);
  if (!grant.ok) return errorResponse(grant.error);
  const { backend, level0, watcher } = grant.value;
  const journal = rootJournalStub(env, backend, level0);
  const accepted = await journal
    .fetch(JOURNAL_URL, { headers: { Upgrade: "websocket", [WATCHER_HEADER]: JSON.stringify(watcher) } })
    .catch(() => null);
  if (!accepted?.webSocket) return errorResponse(refusal("unavailable"));
  // Revoked while the socket was being accepted: the revocation may have asked the journal before it existed.
  const alive = await cap.describe();
  if (!alive.ok) {
    await journal.closeWatchers(watcher.capId).catch(() => null);
    return errorResponse(alive.error);
  }
  return new Response(null, { status: 101, webSocket: relaySocket(accepted.webSocket) });
}
