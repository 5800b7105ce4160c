import { describe, expect, it } from "vitest";
import { ADMIN, call, cap, mintRoot } from "./vault.ts";

/**
 * Every answer carries the headers that keep a cap URL and a served file
 * from being turned against the vault: no Referer leak, no shared cache, no
 * MIME sniffing, and a sandbox so an HTML file cannot script the vault's origin.
 */
function expectGuarded(res: Response, what: string): void {
  expect(res.headers.get("referrer-policy"), what).toBe("no-referrer");
  expect(res.headers.get("cache-control"), what).toMatch(/\bno-store\b/);
  expect(res.headers.get("x-content-type-options"), what).toBe("nosniff");
  expect(res.headers.get("content-security-policy"), what).toMatch(/^sandbox\b/);
}

describe("security headers", () => {
  it("are on files, JSON answers, refusals and unknown routes alike", async () => {
    const root = cap((await mintRoot("headers/")).token);
    expect((await root.write("page.html", "<script>alert(1)</script>", { "content-type": "text/html" })).status).toBe(
      201,
    );
    const file = await root.read("page.html");
    expectGuarded(file, "an HTML file");
    expect(file.headers.get("cache-control")).toMatch(/no-transform/);
    await file.text();
    for (const [what, res] of [
      ["info", await root.info()],
      ["list", await root.list()],
      ["refusal", await root.read("../x")],
      ["unknown token", await call("GET", `/object/${"a".repeat(48)}`)],
      ["unknown route", await call("GET", "/nope")],
      ["admin", await call("GET", "/admin/roots", { headers: { authorization: `Bearer ${ADMIN}` } })],
      ["admin refused", await call("GET", "/admin/roots")],
    ] as const) {
      expectGuarded(res, what);
      await res.body?.cancel();
    }
  });
});
