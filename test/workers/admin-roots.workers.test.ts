/**
 * The admin API's contract (`/admin/roots`): the token compared exactly,
 * roots listed a page at a time in id order and revoked by id, bad roots
 * refused. The caps' own contract: contract.workers.test.ts.
 */
import { env, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { rootRegistryStub } from "../../durable-objects/object-stubs.ts";
import { RootRegistry } from "../../durable-objects/root-registry.ts";
import { ADMIN, allRoots, call, cap, errorCode, mintRoot } from "./vault.ts";

describe("admin", () => {
  it("needs the admin token, compared exactly", async () => {
    for (const authorization of [undefined, "Bearer wrong", `Bearer ${ADMIN}x`, ADMIN, `Basic ${ADMIN}`]) {
      const res = await call("GET", "/admin/roots", authorization ? { headers: { authorization } } : {});
      expect(res.status).toBe(401);
      expect(await errorCode(res)).toBe("unauthorized");
    }
  });

  it("lists roots with their prefix and revokes by id", async () => {
    const minted = await mintRoot("admin-listing/", { label: "listing", rights: ["read", "list"] });
    const { roots } = await allRoots();
    expect(roots.find((r) => r.id === minted.id)).toMatchObject({
      prefix: "admin-listing/",
      rights: ["read", "list"],
      backend: "r2",
    });
    const revoke = await call("DELETE", `/admin/roots/${minted.id}`, { headers: { authorization: `Bearer ${ADMIN}` } });
    expect(revoke.status).toBe(204);
    expect(await errorCode(await cap(minted.token).info())).toBe("no_such_cap");
  });

  it("lists roots a page at a time, in id order, each once; a bad limit or cursor is refused", async () => {
    const minted = await Promise.all(Array.from({ length: 5 }, (_, i) => mintRoot(`admin-paging/${i}/`)));
    const { roots, pages } = await allRoots(2);
    expect(pages.every((n) => n <= 2)).toBe(true);
    expect(pages.length).toBeGreaterThanOrEqual(3);
    const ids = roots.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual([...ids].sort());
    for (const m of minted) expect(ids).toContain(m.id);
    const admin = { headers: { authorization: `Bearer ${ADMIN}` } };
    for (const query of ["limit=0", "limit=1001", "limit=x", "cursor=!!", "cursor=a&cursor=b"])
      expect(await errorCode(await call("GET", `/admin/roots?${query}`, admin)), query).toBe("bad_request");
  });

  it("refuses bad roots: unknown backend, bad prefix, disk where no disk host runs", async () => {
    const mint = (json: unknown) =>
      call("POST", "/admin/roots", { headers: { authorization: `Bearer ${ADMIN}` }, json });
    expect(await errorCode(await mint({ backend: "s3", prefix: "x" }))).toBe("bad_request");
    expect(await errorCode(await mint({ backend: "r2", prefix: "../x" }))).toBe("path_escapes");
    expect(await errorCode(await mint({ backend: "r2", prefix: "x", extra: 1 }))).toBe("bad_request");
    // Where no disk host is bound (on Cloudflare), disk roots are refused up front.
    const registry = rootRegistryStub(env);
    const refused = await runInDurableObject(registry, (_instance, state) =>
      new RootRegistry(state, { ...env, DISK: undefined }).mintRoot(
        { backend: "disk", path: "notes", rights: null, ttlSeconds: null, label: null },
        "https://vault.test",
      ),
    );
    expect(refused).toEqual({
      ok: false,
      error: { code: "bad_request", message: "the disk backend is not configured on this deployment" },
    });
  });
});
