import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { capObject, setExpiry, slowPut, uploadsRunning } from "./slow-upload.ts";
import { ADMIN, call, cap, child, errorCode, mintRoot } from "./vault.ts";

/**
 * The guarantee: once a revocation answers, no write through the revoked cap
 * or any descendant lands; once expiresAt passes, no write lands. Each upload
 * is started, seen running in its cap's object, then the cap dies, and only
 * then is the rest of the body sent: a write that survived would land then.
 */
let counter = 0;
const SLOW = 60_000; // a loaded machine mints slowly; nothing here waits on a clock but the expiry tests

type Handle = Awaited<ReturnType<typeof child>> | (ReturnType<typeof cap> & { minted: { id: string } });

describe.each(["r2", "disk"] as const)("%s backend: uploads in flight", (backend) => {
  /** root -> c1 -> c2 -> c3 -> c4, each in a subfolder; an observer root on the same prefix outlives them all. */
  async function chain() {
    const prefix = `cut/${backend}/${++counter}/`;
    const observer = cap((await mintRoot(prefix, { backend })).token);
    const minted = await mintRoot(prefix, { backend });
    const caps: Handle[] = [{ ...cap(minted.token), minted }];
    const dirs = [""];
    for (let depth = 1; depth <= 4; depth++) {
      caps.push(await child(caps[depth - 1]!, { path: `d${depth}` }));
      dirs.push(`${dirs[depth - 1]}d${depth}/`);
    }
    return { observer, caps, dirs };
  }

  /** Starts one slow upload through each cap in `through`, and waits until every one is running. */
  async function uploads(through: Handle[]) {
    const running = through.map((c) => slowPut(c.token, "upload.bin"));
    for (const c of through) await uploadsRunning(c.token);
    return running;
  }

  /** Sends the rest of every body, then checks each upload was refused and nothing landed. */
  async function expectNothingLanded(
    running: ReturnType<typeof slowPut>[],
    observer: ReturnType<typeof cap>,
    paths: string[],
  ) {
    await Promise.all(running.map((u) => u.finish()));
    for (const u of running) expect(await errorCode(await u.response)).toBe("no_such_cap");
    for (const path of paths) expect(await errorCode(await observer.read(path))).toBe("not_found");
  }

  /** Each path of revocation, with the index in the chain of the cap it revokes. */
  const revocations: [string, number, (caps: Handle[]) => Promise<Response>][] = [
    ["the holder's DELETE", 1, (caps) => caps[1]!.revoke()],
    ["the parent's DELETE /children/<id>", 1, (caps) => caps[0]!.revokeChild(caps[1]!.minted.id)],
    [
      "the admin's DELETE /admin/roots/<id>",
      0,
      (caps) => call("DELETE", `/admin/roots/${caps[0]!.minted.id}`, { headers: { authorization: `Bearer ${ADMIN}` } }),
    ],
  ];

  for (const [how, target, revoke] of revocations) {
    it(
      `${how} cuts uploads through the cap and its descendants 1, 2 and 3 deep`,
      async () => {
        const { observer, caps, dirs } = await chain();
        const running = await uploads(caps.slice(target, target + 4));
        const res = await revoke(caps);
        expect(res.status).toBe(204);
        await expectNothingLanded(
          running,
          observer,
          dirs.slice(target, target + 4).map((d) => `${d}upload.bin`),
        );
      },
      SLOW,
    );
  }

  it(
    "a cascade reaching a descendant whose record is already gone still cuts its uploads and reaches its children",
    async () => {
      const { observer, caps, dirs } = await chain();
      const running = await uploads(caps.slice(1, 5));
      // c2's record is gone (expired and cleared, or a revocation still under
      // way) while its upload runs and its child c3 is still recorded.
      await runInDurableObject(await capObject(caps[2]!.token), async (_i, state) => {
        await state.storage.delete("cap");
      });
      expect((await caps[1]!.revoke()).status).toBe(204);
      await expectNothingLanded(
        running,
        observer,
        dirs.slice(1, 5).map((d) => `${d}upload.bin`),
      );
      for (const c of caps.slice(1)) expect(await errorCode(await c.info())).toBe("no_such_cap");
    },
    SLOW,
  );

  it(
    "the alarm retrying a cascade cuts the uploads it reaches",
    async () => {
      const { observer, caps, dirs } = await chain();
      const running = await uploads(caps.slice(2, 5));
      // c1 as an unfinished revocation leaves it: no record, a tombstone, its
      // child still recorded, an alarm set.
      await runInDurableObject(await capObject(caps[1]!.token), async (_i, state) => {
        await state.storage.delete("cap");
        await state.storage.put("tombstone", { pending: [], parent: null });
        await state.storage.setAlarm(Date.now() + 60_000);
      });
      expect(await runDurableObjectAlarm(await capObject(caps[1]!.token))).toBe(true);
      await expectNothingLanded(
        running,
        observer,
        dirs.slice(2, 5).map((d) => `${d}upload.bin`),
      );
      expect(await errorCode(await caps[4]!.info())).toBe("no_such_cap");
      expect((await caps[0]!.info()).status).toBe(200);
    },
    SLOW,
  );

  it(
    "expiry cuts uploads at expiresAt with no alarm, when the cap or an ancestor expires (1, 2 and 3 deep)",
    async () => {
      const { observer, caps, dirs } = await chain();
      // A child never outlives its parent: minting gives every cap below an
      // expiring one the same or an earlier expiry. Do what minting with a
      // short TTL would, and drop every alarm so only the clock can act.
      const expiresAt = Date.now() + 5_000;
      for (const c of caps.slice(1)) await setExpiry(c.token, expiresAt);
      const running = await uploads(caps.slice(1, 5));
      expect(Date.now()).toBeLessThan(expiresAt); // the uploads really started before expiry
      while (Date.now() <= expiresAt + 50) await new Promise((r) => setTimeout(r, 100));
      await expectNothingLanded(
        running,
        observer,
        dirs.slice(1, 5).map((d) => `${d}upload.bin`),
      );
      expect((await caps[0]!.info()).status).toBe(200);
    },
    SLOW,
  );

  it(
    "the expiry alarm stops uploads its timer missed before it clears the state",
    async () => {
      const { observer, caps, dirs } = await chain();
      const running = await uploads(caps.slice(1, 3));
      // The clock passed expiresAt, but the uploads' timers were set for a
      // later expiry: only the alarm is left to stop them.
      for (const c of caps.slice(1)) await setExpiry(c.token, Date.now() - 1, { alarm: true });
      for (const c of caps.slice(1, 3)) expect(await runDurableObjectAlarm(await capObject(c.token))).toBe(true);
      await expectNothingLanded(
        running,
        observer,
        dirs.slice(1, 3).map((d) => `${d}upload.bin`),
      );
    },
    SLOW,
  );
});

describe("a child never outlives its parent", () => {
  it(
    "clamps every descendant's expiry to its ancestors'",
    async () => {
      const root = cap((await mintRoot(`cut/clamp/${++counter}/`, { ttlSeconds: 3600 })).token);
      const rootExpiry = Date.parse(((await (await root.info()).json()) as { expiresAt: string }).expiresAt);
      let parent: Handle = { ...root, minted: { id: "" } };
      let parentExpiry = rootExpiry;
      for (const ttlSeconds of [undefined, 7200, 60, 86_400]) {
        const kid: Handle = await child(parent, ttlSeconds === undefined ? { path: "" } : { path: "", ttlSeconds });
        const expiry = Date.parse((kid as Awaited<ReturnType<typeof child>>).minted.expiresAt!);
        expect(expiry).toBeLessThanOrEqual(parentExpiry);
        parent = kid;
        parentExpiry = expiry;
      }
    },
    SLOW,
  );
});
