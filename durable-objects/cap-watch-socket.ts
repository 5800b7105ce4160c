import { refuse } from "../shared/refusals.ts";
import { ok, type Result } from "../shared/result.ts";
import type { Backend } from "../shared/wire-types.ts";
import type { CapRecord } from "./cap-record.ts";
import { parseSince, sinceWithin } from "./cap-versions.ts";
import type { ObjectEnv } from "./object-env.ts";
import { rootJournalStub } from "./object-stubs.ts";
import type { SocketRequest } from "./watch-socket-request.ts";

/**
 * Kept by a cap that granted a WebSocket watcher: which journal holds its
 * sockets. The journal holds them through hibernation, not this object, so
 * revocation and expiry must reach over to close them; only caps that ever
 * opened one pay that call.
 */
const MARK = "watch-sockets";

interface Mark {
  backend: Backend;
  level0: string;
  capId: string;
}

/** Where the worker takes a WebSocket watcher the cap admitted: the root's journal, and who the watcher is. */
export interface WatchSocketGrant {
  backend: Backend;
  level0: string;
  watcher: SocketRequest;
}

/**
 * Grants a WebSocket watcher of this cap's subtree. The mark is stored before
 * the socket exists, so a revocation (which reads it after killing the
 * record) either closes the socket, or landed first and the worker's check of
 * the cap after the accept sees it dead and closes it.
 */
export async function grantWatchSocket(
  env: ObjectEnv,
  storage: DurableObjectStorage,
  cap: CapRecord,
  rawSince: string | null,
): Promise<Result<WatchSocketGrant>> {
  const since = parseSince(rawSince);
  if (!since.ok) return since;
  // A deployment without journals keeps no history, and so has nothing to watch.
  if (!env.JOURNALS) return refuse("unavailable");
  const mark: Mark = { backend: cap.backend, level0: cap.root[0] ?? "", capId: cap.id };
  await storage.put(MARK, mark);
  const scope = cap.root.slice(1).join("");
  return ok({
    backend: mark.backend,
    level0: mark.level0,
    watcher: { scope, capId: cap.id, expiresAt: cap.expiresAt, since: sinceWithin(cap, since.value) },
  });
}

/** Closes this cap's WebSocket watchers, if it ever had any: on revocation and on expiry. */
export async function closeWatchSockets(env: ObjectEnv, storage: DurableObjectStorage): Promise<void> {
  const mark = await storage.get<Mark>(MARK);
  if (!mark || !env.JOURNALS) return;
  // Unreachable now: the revocation's alarm runs the cascade, and so this, again.
  await rootJournalStub(env, mark.backend, mark.level0)
    .closeWatchers(mark.capId)
    .catch(() => null);
}
