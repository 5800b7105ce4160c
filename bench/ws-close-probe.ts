/**
 * A probe for how soon a WebSocket watcher sees its socket end (not wired into
 * npm test or npm run bench), on R2 and on disk, against the real launcher:
 * from the revocation's answer to the client's close frame (readyState
 * CLOSING) and to its `close` event (the TCP connection gone); and the same
 * for the 1008 close a watcher that speaks gets; and a revocation while
 * commits (one a second, up to 30) keep the root's journal awake.
 *
 *   node --import tsx bench/ws-close-probe.ts [rounds]
 */
import { Agent, fetch, WebSocket } from "undici";
import { startTestVault } from "../test/node/test-vault.ts";

const ROUNDS = Number(process.argv[2] ?? 3);
const fresh = new Agent({ pipelining: 0 });

async function subdir(capUrl: string, path: string): Promise<string> {
  const res = await fetch(`${capUrl}/subdir`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ path }),
    dispatcher: fresh,
  });
  return ((await res.json()) as { url: string }).url;
}

/** Opens a watcher, runs `end` once it is open, returns ms from `end`'s answer to CLOSING and to `close`. */
async function timeClose(capUrl: string, end: (ws: WebSocket) => Promise<void>) {
  const ws = new WebSocket(`${capUrl.replace(/^http/, "ws")}/watch`);
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = reject;
  });
  const closed = new Promise<number>((resolve) => {
    ws.onclose = () => resolve(performance.now());
  });
  await end(ws);
  const t0 = performance.now();
  let closing = Number.NaN;
  const poll = setInterval(() => {
    if (Number.isNaN(closing) && ws.readyState >= WebSocket.CLOSING) closing = performance.now() - t0;
  }, 2);
  const at = await closed;
  clearInterval(poll);
  // Closed between two polls: the frame came no later than the close.
  const frame = Number.isNaN(closing) ? at - t0 : closing;
  return { frame: Math.round(frame), close: Math.round(at - t0) };
}

/** Commits to `root` once a second until `done` (at most 30). */
async function keepAwake(root: string, done: () => boolean): Promise<void> {
  for (let i = 0; i < 30 && !done(); i++) {
    const res = await fetch(`${root}/file?path=awake-${i}.txt`, { method: "PUT", body: "x", dispatcher: fresh });
    await res.arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

const vault = await startTestVault();
try {
  for (const backend of ["r2", "disk"] as const) {
    const root = backend === "r2" ? vault.rootCapUrl : vault.diskCapUrl;
    for (let i = 0; i < ROUNDS; i++) {
      const cap = await subdir(root, `probe-${backend}-${i}`);
      const revoked = await timeClose(cap, async () => {
        const res = await fetch(cap, { method: "DELETE", dispatcher: fresh });
        await res.arrayBuffer();
      });
      const spoke = await timeClose(await subdir(root, `probe-${backend}-${i}-b`), async (ws) => ws.send("hi"));
      console.log(
        `${backend} revoke: frame ${revoked.frame} ms, close ${revoked.close} ms | 1008: frame ${spoke.frame} ms, close ${spoke.close} ms`,
      );
    }
    const cap = await subdir(root, `probe-${backend}-busy`);
    let done = false;
    let awake = Promise.resolve();
    const busy = await timeClose(cap, async () => {
      await (await fetch(cap, { method: "DELETE", dispatcher: fresh })).arrayBuffer();
      awake = keepAwake(root, () => done);
    }).catch(() => null);
    done = true;
    await awake;
    console.log(`${backend} revoke, journal kept awake: close ${busy ? `${busy.close} ms` : "failed"}`);
  }
} finally {
  await vault.stop();
  await fresh.close();
}
