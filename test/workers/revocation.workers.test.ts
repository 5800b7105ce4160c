import { env, listDurableObjectIds, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { capObjectStub, rootRegistryStub } from "../../durable-objects/object-stubs.ts";
import { base32, digestToken, mintToken } from "../../shared/token.ts";
import { capObject, setExpiry } from "./slow-upload.ts";
import { ADMIN, allRoots, call, cap, child, errorCode, mintRoot } from "./vault.ts";

type Cap = Awaited<ReturnType<typeof child>>;

/** 30 random bytes: a token of the right shape whose MAC (almost surely) does not verify. */
function forgedToken(): string {
  return base32(crypto.getRandomValues(new Uint8Array(30)));
}

/** A real token with its last character changed: the MAC no longer matches. */
function flipLast(token: string): string {
  return token.slice(0, -1) + (token.endsWith("a") ? "b" : "a");
}

/** Every route of a cap, `childId` naming a child for DELETE /children/<id>. */
const routes = (c: ReturnType<typeof cap>, childId = "abc") => {
  const base = `/object/${c.token}`;
  return [
    () => c.info(),
    () => c.read("f"),
    () => c.write("f", "x"),
    () => c.remove("f"),
    () => c.list(),
    () => c.stat(""),
    () => c.subdir({ path: "" }),
    () => c.revoke(),
    () => c.children(),
    () => call("GET", `${base}/children?limit=1`),
    () => c.revokeChild(childId),
    () => call("GET", `${base}/tree`),
    () => call("DELETE", `${base}/tree/${childId}`),
    () => c.move({ from: "f", to: "g" }),
    // Requests the worker finds malformed on its own must not tell a dead cap from a live one.
    () => call("POST", `${base}/subdir`, { body: "{not json" }),
    () => call("POST", `${base}/move`, { json: { from: 1 } }),
    () => call("GET", `${base}/file?path=%FF`),
    () => call("GET", `${base}/file?path=a&path=b`),
    () => call("GET", `${base}/audit`),
    () => call("POST", `${base}/memory`, { json: { command: "view", path: "/memories" } }),
    () =>
      call("POST", `${base}/mcp`, {
        json: { jsonrpc: "2.0", id: 1, method: "tools/list" },
        headers: { accept: "application/json, text/event-stream" },
      }),
  ];
};

/** Status, headers (but the date) and body of every route, for byte-for-byte comparison. */
const capture = async (c: ReturnType<typeof cap>, childId?: string) =>
  Promise.all(
    routes(c, childId).map(async (r) => {
      const res = await r();
      const headers = [...res.headers]
        .filter(([n]) => n !== "date")
        .sort()
        .join("\n");
      return `${res.status}\n${headers}\n${await res.text()}`;
    }),
  );

async function alive(c: { info(): Promise<Response> }): Promise<boolean> {
  const res = await c.info();
  if (res.status === 200) return true;
  expect(await errorCode(res)).toBe("no_such_cap");
  return false;
}

/** A tree 3 deep and 3 wide under a root: tree[i] is a child, tree[i].kids[j] a grandchild, and so on. */
async function tree(prefix: string) {
  const root = cap((await mintRoot(prefix)).token);
  await root.write("keep/file.txt", "survives revocation");
  const level1: { cap: Cap; kids: { cap: Cap; kids: Cap[] }[] }[] = [];
  for (let i = 0; i < 3; i++) {
    const a = await child(root, { path: `d${i}`, label: `a${i}` });
    const kids = [];
    for (let j = 0; j < 3; j++) {
      const b = await child(a, { path: `e${j}` });
      const leaves = [];
      for (let k = 0; k < 3; k++) leaves.push(await child(b, { path: "", rights: ["read", "list"] }));
      kids.push({ cap: b, kids: leaves });
    }
    level1.push({ cap: a, kids });
  }
  return { root, level1 };
}

describe("revocation", () => {
  it("revoking a middle cap kills exactly its subtree", async () => {
    const { root, level1 } = await tree("revoke/tree/");
    const middle = level1[1]!;
    const res = await middle.cap.revoke();
    expect(res.status).toBe(204);

    expect(await alive(middle.cap)).toBe(false);
    for (const b of middle.kids) {
      expect(await alive(b.cap)).toBe(false);
      for (const leaf of b.kids) expect(await alive(leaf)).toBe(false);
    }
    expect(await alive(root)).toBe(true);
    for (const sibling of [level1[0]!, level1[2]!]) {
      expect(await alive(sibling.cap)).toBe(true);
      for (const b of sibling.kids) {
        expect(await alive(b.cap)).toBe(true);
        for (const leaf of b.kids) expect(await alive(leaf)).toBe(true);
      }
    }
    // Every route of a revoked cap answers no_such_cap.
    for (const res of [
      await middle.cap.read("x"),
      await middle.cap.write("x", "y"),
      await middle.cap.list(),
      await middle.cap.stat(""),
      await middle.cap.subdir({ path: "" }),
      await middle.cap.children(),
      await middle.cap.revoke(),
      await middle.kids[0]!.kids[0]!.read("x"),
    ]) {
      expect(await errorCode(res)).toBe("no_such_cap");
    }
    // The parent forgot it; files are untouched.
    const { children } = (await (await root.children()).json()) as {
      children: { id: string; label: string; path: string }[];
    };
    expect(children.map((c) => c.label)).toEqual(["a0", "a2"]);
    expect(children[0]!.path).toBe("d0");
    expect(await (await root.read("keep/file.txt")).text()).toBe("survives revocation");
  });

  it("revokes a child by id from the parent, and an admin revokes a whole root", async () => {
    const { root, level1 } = await tree("revoke/by-id/");
    const target = level1[0]!;
    expect((await root.revokeChild(target.cap.minted.id)).status).toBe(204);
    expect(await alive(target.cap)).toBe(false);
    expect(await alive(target.kids[2]!.kids[2]!)).toBe(false);
    expect(await alive(level1[1]!.cap)).toBe(true);
    expect(await errorCode(await root.revokeChild(target.cap.minted.id))).toBe("not_found");
    // A cap cannot revoke what is not its own child.
    expect(await errorCode(await level1[1]!.cap.revokeChild(level1[2]!.cap.minted.id))).toBe("not_found");
    expect(await alive(level1[2]!.cap)).toBe(true);

    const rootId = ((await (await root.info()).json()) as { id: string }).id;
    const res = await call("DELETE", `/admin/roots/${rootId}`, { headers: { authorization: `Bearer ${ADMIN}` } });
    expect(res.status).toBe(204);
    expect(await alive(root)).toBe(false);
    expect(await alive(level1[2]!.kids[1]!.kids[0]!)).toBe(false);
  });

  it("gives byte-identical answers for revoked, expired, unknown, forged and malformed tokens", async () => {
    const root = cap((await mintRoot("revoke/identical/")).token);
    const revoked = await child(root, { path: "a" });
    await revoked.revoke();
    const expiring = await child(root, { path: "b", ttlSeconds: 1 });
    await new Promise((r) => setTimeout(r, 1100));
    // Signed with the vault key but never minted: the only unknown token that reaches an object.
    const signed = await mintToken(env.CAPVAULT_TOKEN_KEY);
    if (!signed.ok) throw new Error("the test vault has no token key");
    const unknown = cap(signed.value);
    // Forged: the right shape and alphabet, a MAC that does not verify.
    const forged = cap(forgedToken());
    const tampered = cap(flipLast(root.token));
    // Of the shape tokens had before they were signed: one answer of its own (legacy-reissue.workers.test.ts).
    const oldShape = cap("a".repeat(32));
    const madeUp = cap(base32(crypto.getRandomValues(new Uint8Array(20))));
    const malformed = cap("not-a-token");
    const expected = await capture(unknown);
    expect(expected[0]).toContain('"no_such_cap"');
    expect(await capture(revoked)).toEqual(expected);
    expect(await capture(expiring)).toEqual(expected);
    expect(await capture(malformed)).toEqual(expected);
    expect(await capture(forged)).toEqual(expected);
    expect(await capture(tampered)).toEqual(expected);
    const legacy = await capture(oldShape);
    for (const answer of legacy) expect(answer).toContain('"legacy_token"');
    expect(await capture(madeUp)).toEqual(legacy);
  }, 30_000);

  it("a forged token never addresses a Durable Object", async () => {
    const root = cap((await mintRoot("revoke/forged/")).token);
    const before = (await listDurableObjectIds(env.CAPS)).map(String).sort();
    // Made up, tampered with, and of the shape tokens had before they carried a MAC.
    const makers = [
      () => forgedToken(),
      () => flipLast(root.token),
      () => base32(crypto.getRandomValues(new Uint8Array(20))),
    ];
    for (let i = 0; i < 12; i++) {
      const forged = cap(makers[i % makers.length]!());
      const refusal = i % makers.length === 2 ? "legacy_token" : "no_such_cap";
      for (const res of [
        await forged.info(),
        await forged.write("f", "x"),
        await forged.subdir({ path: "" }),
        await forged.revoke(),
      ]) {
        expect(await errorCode(res)).toBe(refusal);
      }
    }
    expect((await listDurableObjectIds(env.CAPS)).map(String).sort()).toEqual(before);
    expect((await root.info()).status).toBe(200);
  }, 30_000);

  it("a cap past expiresAt is dead on every route though its alarm never ran, and nothing changes", async () => {
    const root = cap((await mintRoot("revoke/late-alarm/")).token);
    await root.write("kid/f", "kept");
    const kid = await child(root, { path: "kid", ttlSeconds: 3600 });
    const grandkid = await child(kid, { path: "" });
    // The clock passed expiresAt and the alarms are late (or were lost):
    // only the time check in the cap's liveness stands between them and use.
    for (const c of [kid, grandkid]) await setExpiry(c.token, Date.now() - 1);
    const expected = await capture(cap("a".repeat(48)), grandkid.minted.id);
    expect(expected[0]).toContain('"no_such_cap"');
    expect(await capture(kid, grandkid.minted.id)).toEqual(expected);
    expect(await capture(grandkid, grandkid.minted.id)).toEqual(expected);
    expect(await (await root.read("kid/f")).text()).toBe("kept");
    expect(await errorCode(await root.read("kid/g"))).toBe("not_found");
    // No alarm ran: the refusals came from the clock, not from cleared state.
    const keys = await runInDurableObject(await capObject(kid.token), async (_i, state) => [
      ...(await state.storage.list()).keys(),
    ]);
    expect(keys).toContain("cap");
  }, 60_000);

  it("expires caps and their descendants, and the alarm clears their state", async () => {
    const shortLived = await mintRoot("revoke/expiry-listed/", { ttlSeconds: 1 });
    const root = cap((await mintRoot("revoke/expiry/", { ttlSeconds: 600 })).token);
    const kid = await child(root, { path: "k" });
    const grandkid = await child(kid, { path: "", ttlSeconds: 3600 });
    expect(Date.parse(grandkid.minted.expiresAt!)).toBeLessThanOrEqual(Date.parse(kid.minted.expiresAt!));
    expect(await alive(grandkid)).toBe(true);
    // Their expiry arrives: each was minted no later than the root's, so all
    // reach it together (set in place, with the alarm due, rather than slept
    // through: a loaded machine must not turn minting into a race with it).
    for (const c of [root, kid, grandkid]) await setExpiry(c.token, Date.now() - 1, { alarm: true });
    for (const c of [root, kid, grandkid]) expect(await alive(c)).toBe(false);

    const { key } = await digestToken(kid.token);
    const stub = capObjectStub(env, key);
    await runDurableObjectAlarm(stub);
    const keys = await runInDurableObject(stub, async (_instance, state) => [...(await state.storage.list()).keys()]);
    expect(keys).toEqual([]);
    // An expired root is also gone from the admin listing. The registry goes
    // by its own record of the expiry, so this one really waits for it.
    await new Promise((r) => setTimeout(r, Math.max(0, Date.parse(shortLived.expiresAt!) - Date.now() + 50)));
    const { roots } = await allRoots();
    expect(roots.some((r) => r.id === shortLived.id)).toBe(false);
  });

  it("an unfinished cascade left in a tombstone is finished by the alarm", async () => {
    const root = cap((await mintRoot("revoke/tombstone/")).token);
    const a = await child(root, { path: "a" });
    const b = await child(a, { path: "b" });
    const aKey = (await digestToken(a.token)).key;
    const bRef = await digestToken(b.token);
    const stub = capObjectStub(env, aKey);
    // The state a revocation leaves when a descendant could not be reached:
    // the record gone, the unreached child remembered, an alarm set.
    await runInDurableObject(stub, async (_instance, state) => {
      await state.storage.deleteAll();
      await state.storage.put("tombstone", { pending: [{ id: bRef.id, key: bRef.key }], parent: null });
      await state.storage.setAlarm(Date.now() + 60_000);
    });
    expect(await alive(a)).toBe(false);
    expect(await alive(b)).toBe(true);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await alive(b)).toBe(false);
    const keys = await runInDurableObject(stub, async (_instance, state) => [...(await state.storage.list()).keys()]);
    expect(keys).toEqual([]);
    expect(await alive(root)).toBe(true);
  });

  it("a revocation answers once the whole subtree is dead; each member's alarm then clears its state", async () => {
    const root = cap((await mintRoot("revoke/cleared-later/")).token);
    const a = await child(root, { path: "a" });
    const b = await child(a, { path: "b" });
    const c = await child(b, { path: "" });
    const b2 = await child(a, { path: "b2" });
    await c.write("f", "written before");
    expect((await a.revoke()).status).toBe(204);
    const members = [a, b, c, b2];
    // Dead on every route the moment the answer came, whatever is left to clear.
    for (const m of members) {
      expect(await alive(m)).toBe(false);
      expect(await errorCode(await m.write("g", "x"))).toBe("no_such_cap");
      expect(await errorCode(await m.children())).toBe("no_such_cap");
    }
    const stateOf = async (m: Cap) =>
      runInDurableObject(await capObject(m.token), async (_i, state) => ({
        keys: [...(await state.storage.list()).keys()],
        alarm: await state.storage.getAlarm(),
      }));
    for (const m of members) {
      // The record went in the kill; the rest waits for the alarm the kill
      // set (which may have run by now on a slow machine: then it is cleared).
      const before = await stateOf(m);
      expect(before.keys).not.toContain("cap");
      if (before.keys.length > 0) expect(before.alarm).not.toBeNull();
      await runDurableObjectAlarm(await capObject(m.token));
      expect(await stateOf(m)).toEqual({ keys: [], alarm: null });
      expect(await alive(m)).toBe(false);
    }
    // A second revocation of a cleared subtree finds nothing and changes nothing.
    expect(await errorCode(await root.revokeChild(a.minted.id))).toBe("not_found");
    expect(await errorCode(await a.revoke())).toBe("no_such_cap");
    expect(await alive(root)).toBe(true);
    expect(await (await root.read("a/b/f")).text()).toBe("written before");
  });

  it("a leaf holding nothing but its record is cleared by its kill alone; one holding more keeps its alarm", async () => {
    const root = cap((await mintRoot("revoke/leaf/")).token);
    const leaf = await child(root, { path: "" });
    await leaf.write("f", "audited"); // an audit table, which the kill drops
    // Minted once, its child forgotten since: it holds a child count of 0, nothing else.
    const former = await child(root, { path: "" });
    const gone = await child(former, { path: "" });
    expect((await former.revokeChild(gone.minted.id)).status).toBe(204);
    // State the revocation does not know must never be taken for nothing.
    const withKey = await child(root, { path: "" });
    const withTable = await child(root, { path: "" });
    await runInDurableObject(await capObject(withKey.token), (_i, state) => state.storage.put("kept", 1));
    await runInDurableObject(await capObject(withTable.token), (_i, state) => {
      state.storage.sql.exec("CREATE TABLE kept (x)");
    });
    const stateOf = async (m: Cap) =>
      runInDurableObject(await capObject(m.token), async (_i, state) => ({
        keys: [...(await state.storage.list()).keys()],
        tables: state.storage.sql
          .exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'")
          .toArray()
          .map((row) => row.name)
          // The runtime's own tables, and SQLite's (the audit log's AUTOINCREMENT leaves `sqlite_sequence`).
          .filter((name) => !/^(_cf_|sqlite_)/.test(name)),
        alarm: await state.storage.getAlarm(),
      }));
    for (const m of [leaf, former, withKey, withTable]) expect((await m.revoke()).status).toBe(204);
    for (const m of [leaf, former]) {
      expect(await alive(m)).toBe(false);
      expect(await stateOf(m)).toEqual({ keys: [], tables: [], alarm: null });
    }
    for (const m of [withKey, withTable]) {
      expect(await alive(m)).toBe(false);
      const before = await stateOf(m);
      expect(before.keys).not.toContain("cap");
      // Its alarm clears the rest (it may have run already on a slow machine).
      if (before.keys.length > 0 || before.tables.length > 0) expect(before.alarm).not.toBeNull();
      await runDurableObjectAlarm(await capObject(m.token));
      expect(await stateOf(m)).toEqual({ keys: [], tables: [], alarm: null });
    }
    expect(await (await root.read("f")).text()).toBe("audited");
    expect(await errorCode(await leaf.revoke())).toBe("no_such_cap");
  });

  it("a cap minted while its parent is being revoked does not survive", async () => {
    const root = cap((await mintRoot("revoke/race/")).token);
    const parent = await child(root, { path: "p" });
    const minting = Array.from({ length: 5 }, () => parent.subdir({ path: "" }));
    const revoking = parent.revoke();
    const results = await Promise.all(minting);
    // 202 when a racing mint added a child the cascade then left to the alarm (that mint undoes it itself).
    expect([202, 204]).toContain((await revoking).status);
    for (const res of results) {
      if (res.status !== 201) {
        expect(await errorCode(res)).toBe("no_such_cap");
        continue;
      }
      const { token } = (await res.json()) as { token: string };
      expect(await alive(cap(token))).toBe(false);
    }
  });
});

describe("durable state holds no tokens", () => {
  it("stores only digests: no minted token appears in its caps' or the registry's storage", async () => {
    const root = cap((await mintRoot("state/no-tokens/")).token);
    const a = await child(root, { path: "a", label: "visible label" });
    const b = await child(a, { path: "b" });
    const tokens = [root.token, a.token, b.token];
    const dumps: string[] = [];
    // This test's objects only: in a workerd shared with other files, every object ever made would be a growing scan.
    for (const token of tokens) {
      const stub = capObjectStub(env, (await digestToken(token)).key);
      dumps.push(
        await runInDurableObject(stub, async (_i, state) => JSON.stringify([...(await state.storage.list())])),
      );
    }
    const registry = rootRegistryStub(env);
    dumps.push(
      await runInDurableObject(registry, async (_i, state) => JSON.stringify([...(await state.storage.list())])),
    );
    const all = dumps.join("\n");
    expect(all).toContain("visible label");
    for (const token of tokens) expect(all).not.toContain(token);
  });
});
