import { beforeAll, describe, expect, it } from "vitest";
import { RIGHTS } from "../../shared/rights.ts";
import { ops } from "./rights-matrix-ops.ts";
import { capWith, http, lacking, mcpTools, snapshot, sufficient, useRoot } from "./rights-matrix-probes.ts";
import { cap, child, mintRoot } from "./vault.ts";

/**
 * Every operation on every surface against the rights it needs: a cap
 * holding every right but one it needs is refused with `forbidden` and
 * changes nothing; a cap holding only what it needs succeeds. A swap of
 * rights (delete allowed with write, a move with write alone) fails here
 * whatever the bisimulation's seed. One vault: the caps are children of one
 * root, minted once per set of rights.
 */

let root: ReturnType<typeof cap>;
let counter = 0;

beforeAll(async () => {
  const minted = await mintRoot(`rights-matrix/${Date.now()}/`);
  root = useRoot(minted.token);
  expect([...minted.rights].sort()).toEqual([...RIGHTS].sort());
});

describe("the rights matrix", () => {
  for (const op of ops) {
    it(`${op.name} needs ${op.needs.join(op.any ? " or " : " and ")}`, async () => {
      for (const rights of lacking(op)) {
        const token = await capWith(rights);
        const ctx = await op.prepare?.(++counter);
        const before = await snapshot(ctx);
        expect(await op.act(token, ctx ?? { file: "" }), `${op.name} with ${rights.join(",")}`).toBe("forbidden");
        expect(await snapshot(ctx), `${op.name} with ${rights.join(",")} changed something`).toEqual(before);
      }
      for (const rights of sufficient(op)) {
        const token = await capWith(rights);
        const ctx = await op.prepare?.(++counter);
        expect(await op.act(token, ctx ?? { file: "" }), `${op.name} with ${rights.join(",")}`).toBe("ok");
      }
    });
  }

  it("MCP offers each tool exactly to the caps holding what it needs", async () => {
    for (const op of ops.filter((o) => o.name.startsWith("mcp "))) {
      const tool = op.name.slice(4);
      for (const rights of lacking(op))
        expect(await mcpTools(await capWith(rights)), rights.join(",")).not.toContain(tool);
      for (const rights of sufficient(op))
        expect(await mcpTools(await capWith(rights)), rights.join(",")).toContain(tool);
    }
  });

  it("revoking a child (DELETE /children/:id, /tree/:id) needs subdir", async () => {
    for (const route of ["children", "tree"]) {
      const without = await capWith(RIGHTS.filter((r) => r !== "subdir"));
      const holder = await capWith(["subdir"]);
      // Not its child, but the right is judged before the id: refused all the same, the victim untouched.
      const victim = await child(root, { path: "", rights: ["read"] });
      const before = await snapshot(undefined);
      expect(await http(without, "DELETE", `/${route}/${victim.minted.id}`)).toBe("forbidden");
      expect(await snapshot(undefined)).toEqual(before);
      expect((await victim.info()).status).toBe(200);
      const own = await child(cap(holder), { path: "" });
      expect(await http(holder, "DELETE", `/${route}/${own.minted.id}`)).toBe("ok");
      expect((await own.info()).status).toBe(404);
    }
  });
});
