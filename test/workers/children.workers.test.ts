import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { CapRecord, ChildRecord } from "../../durable-objects/cap-record.ts";
import { addChild, CHILD, MAX_CHILDREN } from "../../durable-objects/child-index.ts";
import { capObjectStub } from "../../durable-objects/object-stubs.ts";
import { capObject } from "./slow-upload.ts";
import { call, cap, child, errorCode, mintRoot, ORIGIN } from "./vault.ts";

let counter = 0;
const SLOW = 120_000; // hundreds of mints on a loaded machine; nothing here waits on a clock

interface Page {
  children: { id: string; label: string | null; createdAt: string }[];
  cursor: string | null;
}

const page = async (token: string, query: string): Promise<Page> => {
  const res = await call("GET", `/object/${token}/children${query}`);
  expect(res.status).toBe(200);
  return res.json();
};

/** Mints `n` children of `token` straight through its object's RPC (the mint code path without HTTP), `lanes` at a time. */
async function mintMany(token: string, n: number, lanes = 16): Promise<{ id: string; token: string }[]> {
  const stub = await capObject(token);
  const minted: { id: string; token: string }[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (next < n) {
        const i = next++;
        const made = await stub.mintChild({ path: "", rights: null, ttlSeconds: null, label: `c${i}` }, ORIGIN);
        if (!made.ok) throw new Error(`mint ${i}: ${made.error.code}`);
        minted.push({ id: made.value.id, token: made.value.token });
      }
    }),
  );
  return minted;
}

describe("children", () => {
  it("a child whose parent's revocation reached its key before its init never comes alive", async () => {
    // The interleaving of a mint with its parent's cascade, at the child's end: the parent has
    // indexed the child, its cascade reaches the child's (still empty) object and drops it from
    // the index, and only then does the mint's init arrive.
    const key = `race-${++counter}-${crypto.randomUUID()}`;
    const stub = capObjectStub(env, key);
    expect(await stub.revokeSubtree()).toEqual({ ok: true, value: { pending: 0 } });
    const record: CapRecord = {
      id: key,
      key,
      backend: "r2",
      root: ["children/race/"],
      rights: ["read"],
      label: null,
      createdAt: Date.now(),
      expiresAt: null,
      parent: { id: "parent", key: "parent-key" },
    };
    expect((await stub.init(record)).ok).toBe(false);
    expect(await stub.describe()).toEqual({ ok: false, error: { code: "no_such_cap", message: expect.any(String) } });
    // The tombstone is the alarm's to clear, as after any revocation.
    await runDurableObjectAlarm(stub);
    expect(await runInDurableObject(stub, async (_i, state) => [...(await state.storage.list()).keys()])).toEqual([]);
  });

  it(
    "pages through children in creation order with an opaque cursor, skipping expired ones",
    async () => {
      const root = cap((await mintRoot(`children/page/${++counter}/`)).token);
      const labels: string[] = [];
      for (let i = 0; i < 7; i++) {
        await child(root, { path: "", label: `k${i}`, ...(i === 3 ? { ttlSeconds: 1 } : {}) });
        labels.push(`k${i}`);
      }
      await new Promise((r) => setTimeout(r, 1100)); // k3 expires
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const p: Page = await page(root.token, `?limit=3${cursor ? `&cursor=${cursor}` : ""}`);
        expect(p.children.length).toBeLessThanOrEqual(3);
        seen.push(...p.children.map((c) => c.label!));
        cursor = p.cursor;
        pages++;
      } while (cursor !== null);
      expect(seen).toEqual(labels.filter((l) => l !== "k3"));
      expect(pages).toBe(2);
      // Without a limit, one page holds every live child (at most MAX_CHILDREN).
      expect((await page(root.token, "")).children.map((c) => c.label)).toEqual(seen);
      expect((await page(root.token, "")).cursor).toBeNull();

      for (const bad of ["?limit=0", "?limit=1001", "?limit=x", "?cursor=%%%", "?cursor=a+b", "?cursor=Lw"]) {
        expect(await errorCode(await call("GET", `/object/${root.token}/children${bad}`))).toBe("bad_request");
      }
      const reader = await child(root, { path: "", rights: ["read"] });
      expect(await errorCode(await reader.children())).toBe("forbidden");
    },
    SLOW,
  );

  it(
    `refuses a cap's ${MAX_CHILDREN + 1}st live child; revoked and expired children free their slots`,
    async () => {
      const root = cap((await mintRoot(`children/limit/${++counter}/`)).token);
      // `short` expires when the test says so (below), not by a wall clock
      // that a busy machine can outrun before the limit is even reached.
      const short = await child(root, { path: "", ttlSeconds: 3600 });
      const kids = await mintMany(root.token, 3);
      // The rest are recorded by the same code a mint uses, without creating
      // their objects: a thousand real objects take minutes on a busy machine.
      await runInDurableObject(await capObject(root.token), async (_i, state) => {
        for (let i = 0; i < MAX_CHILDREN - 4; i++) {
          const id = `filler${String(i).padStart(10, "0")}`;
          const added = await addChild(state.storage, {
            id,
            key: id,
            label: null,
            path: "",
            rights: ["read"],
            createdAt: Date.now(),
            expiresAt: null,
          });
          if (!added.ok) throw new Error(added.error.code);
        }
      });
      const refused = await root.subdir({ path: "" });
      expect(refused.status).toBe(409);
      expect(await errorCode(refused)).toBe("conflict");

      expect((await root.revokeChild(kids[0]!.id)).status).toBe(204);
      expect((await root.subdir({ path: "" })).status).toBe(201);
      expect(await errorCode(await root.subdir({ path: "" }))).toBe("conflict");

      // Once `short` has expired, its slot is free again. Its expiry moves
      // into the past in both records that hold it, as if the hour had passed.
      const past = Date.now() - 1;
      await runInDurableObject(await capObject(root.token), async (_i, state) => {
        const record = await state.storage.get<ChildRecord>(CHILD + short.minted.id);
        await state.storage.put(CHILD + short.minted.id, { ...record!, expiresAt: past });
      });
      await runInDurableObject(await capObject(short.token), async (_i, state) => {
        const record = await state.storage.get<CapRecord>("cap");
        await state.storage.put("cap", { ...record!, expiresAt: past });
      });
      expect(await errorCode(await short.info())).toBe("no_such_cap");
      expect((await root.subdir({ path: "" })).status).toBe(201);
      expect(await errorCode(await root.subdir({ path: "" }))).toBe("conflict");
      // Each child has its own allowance.
      expect((await cap(kids[1]!.token).subdir({ path: "" })).status).toBe(201);
    },
    SLOW,
  );

  it(
    "revoking a parent of 120 children reaches every one, over more than one batch, and its alarm clears its state",
    async () => {
      const root = cap((await mintRoot(`children/cascade/${++counter}/`)).token);
      const parent = await child(root, { path: "" });
      const kids = await mintMany(parent.token, 120);
      const grandkid = await child(cap(kids[119]!.token), { path: "" });
      const stub = await capObject(parent.token);

      expect((await parent.revoke()).status).toBe(204);
      for (const kid of kids) expect(await errorCode(await cap(kid.token).info())).toBe("no_such_cap");
      expect(await errorCode(await grandkid.info())).toBe("no_such_cap");
      // Clearing the state is the alarm's job, after the answer (on a slow machine it may have run already).
      await runDurableObjectAlarm(stub);
      expect(await runInDurableObject(stub, async (_i, state) => [...(await state.storage.list()).keys()])).toEqual([]);
      expect((await root.info()).status).toBe(200);
    },
    SLOW,
  );

  it(
    "state written before the child count and the ordered index still lists and counts",
    async () => {
      const root = cap((await mintRoot(`children/legacy/${++counter}/`)).token);
      for (let i = 0; i < 3; i++) await child(root, { path: "", label: `old${i}` });
      // What the previous version stored: child records only.
      await runInDurableObject(await capObject(root.token), async (_i, state) => {
        const index = [...(await state.storage.list({ prefix: "childAt:" })).keys()];
        await state.storage.delete([...index, "childCount"]);
      });
      expect((await page(root.token, "?limit=2")).children.map((c) => c.label)).toEqual(["old0", "old1"]);
      expect((await page(root.token, "")).children.map((c) => c.label)).toEqual(["old0", "old1", "old2"]);
      const count = await runInDurableObject(await capObject(root.token), (_i, state) =>
        state.storage.get("childCount"),
      );
      expect(count).toBe(3);
    },
    SLOW,
  );
});
