import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { CapRecord } from "../../durable-objects/cap-record.ts";
import { capObjectStub } from "../../durable-objects/object-stubs.ts";
import { digestToken } from "../../shared/token.ts";
import { cap, child, errorCode, mintRoot } from "./vault.ts";
import { readVersion, redact, restore, versionsOf } from "./versions-client.ts";
import { socketWatch, sseWatch } from "./watch-client.ts";

// A child sees its subtree's history only from its mint on: what was written
// and deleted before the delegation is not listed, read, restored, redacted or
// watched through it, unless minted with `history: "all"` (never below its
// parent's own floor). Both backends, HTTP, SSE and WebSocket watch.

let counter = 0;
type Cap = ReturnType<typeof cap>;

describe.each(["r2", "disk"] as const)("%s backend", (backend) => {
  const fresh = async () => {
    const minted = await mintRoot(`floor/${backend}/${++counter}/`, { backend });
    return cap(minted.token);
  };
  /** A secret written and deleted at `path` through `c`: its two versions' ids, newest first. */
  const writeAndDelete = async (c: Cap, path: string, text: string) => {
    expect((await c.write(path, text)).status).toBe(201);
    expect((await c.remove(path)).status).toBe(204);
    const versions = await versionsOf(c, path);
    expect(versions.map((v) => v.operation)).toEqual(["deleted", "created"]);
    return versions.map((v) => v.id);
  };

  it("a child minted after a secret was written and deleted cannot list, read, restore, redact or watch it", async () => {
    const root = await fresh();
    const ids = await writeAndDelete(root, "s/secret.txt", "hunter2");
    const kid = await child(root, { path: "s" });
    expect(await versionsOf(kid, "secret.txt")).toEqual([]);
    const unknown = await (await readVersion(kid, "987654321")).text();
    expect(JSON.parse(unknown).error.code).toBe("not_found");
    for (const id of ids) {
      expect(await (await readVersion(kid, id)).text()).toBe(unknown);
      expect(await (await restore(kid, id)).text()).toBe(unknown);
      expect(await (await redact(kid, id)).text()).toBe(unknown);
    }
    expect((await kid.read("secret.txt")).status).toBe(404);

    // since=0 resumes from the child's floor: its first event is its own first change.
    const feed = await sseWatch(kid.token, "0");
    const sock = await socketWatch(kid.token, "0");
    await kid.write("mine.txt", "new");
    expect(await feed.event()).toMatchObject({ path: "mine.txt" });
    expect(await sock.event()).toMatchObject({ path: "mine.txt" });
    await feed.close();
    sock.close();

    // The root still holds the secret's history, untouched.
    const kept = await readVersion(root, ids[1]!);
    expect(await kept.text()).toBe("hunter2");
    expect((await versionsOf(kid, "mine.txt")).length).toBe(1);
  });

  it("history: \"all\" sees the parent's history; a grandchild never goes below its parent's floor", async () => {
    const root = await fresh();
    const [, before] = await writeAndDelete(root, "a.txt", "before");
    const floored = await child(root, { path: "" });
    const everything = await child(root, { path: "", history: "all" });
    expect((await versionsOf(everything, "a.txt")).length).toBe(2);
    expect(await (await readVersion(everything, before!)).text()).toBe("before");
    const all = await sseWatch(everything.token, "0");
    expect((await all.next())?.data).toMatchObject({ path: "a.txt", version: before });
    await all.close();

    const [, after] = await writeAndDelete(root, "b.txt", "after");
    const grandchild = await child(floored, { path: "", history: "all" });
    expect(await versionsOf(grandchild, "a.txt")).toEqual([]);
    expect(await errorCode(await readVersion(grandchild, before!))).toBe("not_found");
    expect(await (await readVersion(grandchild, after!)).text()).toBe("after");
    const feed = await sseWatch(grandchild.token, "0");
    expect((await feed.next())?.data).toMatchObject({ path: "b.txt", version: after });
    await feed.close();
  });

  it("the delete right cannot redact history written before the delegation", async () => {
    const root = await fresh();
    expect((await root.write("f.txt", "pre-delegation")).status).toBe(201);
    const [old] = await versionsOf(root, "f.txt");
    const kid = await child(root, { path: "", rights: ["read", "write", "delete", "list"] });
    expect(await errorCode(await redact(kid, old!.id))).toBe("not_found");
    // Its own delete's version holds the same bytes as the old one: redacting it would reach below the floor.
    expect((await kid.remove("f.txt")).status).toBe(204);
    const [deleted] = await versionsOf(kid, "f.txt");
    const refused = await redact(kid, deleted!.id);
    expect(refused.status).toBe(403);
    expect(await errorCode(refused)).toBe("forbidden");
    expect(await (await readVersion(root, old!.id)).text()).toBe("pre-delegation");
    // History it made itself it may redact.
    expect((await kid.write("g.txt", "own")).status).toBe(201);
    const [own] = await versionsOf(kid, "g.txt");
    expect((await redact(kid, own!.id)).status).toBe(204);
    expect((await versionsOf(root, "g.txt"))[0]!.redacted).toBe(true);
  });

  it("a cap minted before floors existed (no floor in its record) still sees everything", async () => {
    const root = await fresh();
    const [, created] = await writeAndDelete(root, "old.txt", "legacy");
    const kid = await child(root, { path: "" });
    expect(await errorCode(await readVersion(kid, created!))).toBe("not_found");
    const stub = capObjectStub(env, (await digestToken(kid.token)).key);
    await runInDurableObject(stub, async (_i, state) => {
      const { historyFrom: _, ...record } = (await state.storage.get<CapRecord>("cap"))!;
      await state.storage.put("cap", record);
    });
    expect(await (await readVersion(kid, created!)).text()).toBe("legacy");
  });

  it('a history other than "all" is refused and mints nothing', async () => {
    const root = await fresh();
    for (const history of ["none", true, 0, "ALL"]) {
      const res = await root.subdir({ path: "", history });
      expect(res.status).toBe(400);
      expect(JSON.parse(await res.text()).error).toEqual({
        code: "bad_request",
        message: 'history must be "all" or absent',
      });
    }
    const listed = (await (await root.children()).json()) as { children: unknown[] };
    expect(listed.children).toEqual([]);
  });
});
