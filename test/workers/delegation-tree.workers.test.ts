import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { addChild } from "../../durable-objects/child-index.ts";
import { DELEGATION_TREE_MAX_DEPTH, DELEGATION_TREE_MAX_NODES } from "../../durable-objects/delegation-tree.ts";
import type { CapTree, CapTreeNode } from "../../shared/wire-types.ts";
import { capObject } from "./slow-upload.ts";
import { call, cap, child, errorCode, mintRoot } from "./vault.ts";

let counter = 0;
const SLOW = 120_000; // hundreds of mints on a loaded machine; nothing here waits on a clock

const tree = async (token: string): Promise<{ text: string; body: CapTree }> => {
  const res = await call("GET", `/object/${token}/tree`);
  expect(res.status).toBe(200);
  const text = await res.text();
  return { text, body: JSON.parse(text) };
};

const count = (nodes: CapTreeNode[]): number => nodes.reduce((n, c) => n + 1 + count(c.children), 0);
const depth = (nodes: CapTreeNode[]): number => Math.max(0, ...nodes.map((c) => 1 + depth(c.children)));

describe("GET /tree", () => {
  it("shows the derived caps by id, label, path and rights, and no token or key anywhere", async () => {
    const root = cap((await mintRoot(`tree/shape/${++counter}/`)).token);
    const a = await child(root, { path: "a", label: "agent a", rights: ["read", "list", "subdir"] });
    const b = await child(root, { path: "b", label: "agent b", rights: ["read"], ttlSeconds: 3600 });
    const a1 = await child(a, { path: "x", label: "a's helper", rights: ["read"] });

    const { text, body } = await tree(root.token);
    expect(body.id).toBe(((await (await root.info()).json()) as { id: string }).id);
    expect(body.truncated).toBe(false);
    expect(body.children.map((c) => [c.id, c.label, c.path, c.rights])).toEqual([
      [a.minted.id, "agent a", "a", ["read", "list", "subdir"]],
      [b.minted.id, "agent b", "b", ["read"]],
    ]);
    expect(body.children[1]!.expiresAt).toBe(b.minted.expiresAt);
    expect(body.children[0]!.children.map((c) => [c.id, c.path])).toEqual([[a1.minted.id, "x"]]);
    // Tokens are bearer secrets, and a token's digest names its object: neither may appear.
    for (const minted of [root, a, b, a1]) {
      expect(text).not.toContain(minted.token);
      expect(text).not.toContain(minted.token.slice(-20));
    }
    expect(text).not.toMatch(/"(key|token|url)"/);

    // A revoked subtree leaves the tree at once.
    expect((await a.revoke()).status).toBe(204);
    expect((await tree(root.token)).body.children.map((c) => c.id)).toEqual([b.minted.id]);
  });

  it("needs the subdir right, and a dead or unknown cap answers no_such_cap", async () => {
    const root = cap((await mintRoot(`tree/rights/${++counter}/`)).token);
    const reader = await child(root, { path: "", rights: ["read", "list"] });
    const res = await call("GET", `/object/${reader.token}/tree`);
    expect(res.status).toBe(403);
    expect(await errorCode(res)).toBe("forbidden");
    await reader.revoke();
    const dead = await call("GET", `/object/${reader.token}/tree`);
    const unknown = await call("GET", `/object/not-a-token/tree`);
    expect(dead.status).toBe(404);
    expect(await dead.text()).toBe(await unknown.text());
  });

  it(
    "is bounded in depth: a chain deeper than the bound is cut and says so",
    async () => {
      const root = cap((await mintRoot(`tree/deep/${++counter}/`)).token);
      let holder = root;
      for (let i = 0; i < DELEGATION_TREE_MAX_DEPTH + 2; i++)
        holder = await child(holder, { path: "", label: `d${i}` });
      const { body } = await tree(root.token);
      expect(depth(body.children)).toBe(DELEGATION_TREE_MAX_DEPTH);
      expect(body.truncated).toBe(true);
      // The same walk one level down still reaches its bound, and no further.
      const shallow = cap((await mintRoot(`tree/shallow/${++counter}/`)).token);
      await child(await child(shallow, { path: "" }), { path: "" });
      expect((await tree(shallow.token)).body.truncated).toBe(false);
    },
    SLOW,
  );

  it(
    "is bounded in nodes across the whole tree, however the caps are spread",
    async () => {
      const root = cap((await mintRoot(`tree/wide/${++counter}/`)).token);
      const parents = [await child(root, { path: "" }), await child(root, { path: "" })];
      // Most children are recorded by the code a mint uses, without creating
      // their objects (hundreds of real objects take minutes on a busy machine):
      // the walk asks those objects too, and finds them childless.
      for (const [p, parent] of parents.entries()) {
        await runInDurableObject(await capObject(parent.token), async (_i, state) => {
          for (let i = 0; i < DELEGATION_TREE_MAX_NODES / 2 + 10; i++) {
            const id = `filler${p}-${String(i).padStart(6, "0")}`;
            const record = { id, key: id, label: null, path: "", rights: ["read" as const], expiresAt: null };
            const added = await addChild(state.storage, { ...record, createdAt: Date.now() });
            if (!added.ok) throw new Error(added.error.code);
          }
        });
      }
      const { body } = await tree(root.token);
      expect(count(body.children)).toBe(DELEGATION_TREE_MAX_NODES);
      expect(body.truncated).toBe(true);
    },
    SLOW,
  );
});

describe("DELETE /tree/<id>", () => {
  it("revokes a cap anywhere below, with its subtree, and only below", async () => {
    const root = cap((await mintRoot(`tree/revoke/${++counter}/`)).token);
    const a = await child(root, { path: "a", rights: ["read", "list", "subdir"] });
    const a1 = await child(a, { path: "x", rights: ["read", "subdir"] });
    const a1x = await child(a1, { path: "" });
    const b = await child(root, { path: "b" });
    const other = cap((await mintRoot(`tree/revoke-other/${++counter}/`)).token);
    const stranger = await child(other, { path: "" });

    // Not below this cap, or not a cap at all: the same answer, and nothing revoked.
    for (const id of [stranger.minted.id, "nonexistent", ((await (await other.info()).json()) as { id: string }).id]) {
      const res = await call("DELETE", `/object/${root.token}/tree/${id}`);
      expect(res.status).toBe(404);
      expect(await errorCode(res)).toBe("not_found");
    }
    expect((await stranger.info()).status).toBe(200);
    // A cap without subdir cannot revoke below it, even its own child's child.
    const reader = await child(root, { path: "", rights: ["read"] });
    expect(await errorCode(await call("DELETE", `/object/${reader.token}/tree/${a1.minted.id}`))).toBe("forbidden");
    // A grandchild, from the root: it and its child die; its parent and the rest live on, and forget it.
    expect((await call("DELETE", `/object/${root.token}/tree/${a1.minted.id}`)).status).toBe(204);
    expect(await errorCode(await a1.info())).toBe("no_such_cap");
    expect(await errorCode(await a1x.info())).toBe("no_such_cap");
    expect((await a.info()).status).toBe(200);
    expect((await b.info()).status).toBe(200);
    expect(((await (await a.children()).json()) as { children: unknown[] }).children).toEqual([]);
    const audit = (await (await call("GET", `/object/${root.token}/audit`)).json()) as {
      entries: { op: string; path: string; child: string }[];
    };
    expect(audit.entries[0]).toMatchObject({ op: "revoke_child", path: "a/x", child: a1.minted.id });
    // A direct child too.
    expect((await call("DELETE", `/object/${root.token}/tree/${b.minted.id}`)).status).toBe(204);
    expect(await errorCode(await b.info())).toBe("no_such_cap");
    const { body } = await tree(root.token);
    expect(body.children.map((c) => [c.id, c.children.length])).toEqual([
      [a.minted.id, 0],
      [reader.minted.id, 0],
    ]);
  });
});
