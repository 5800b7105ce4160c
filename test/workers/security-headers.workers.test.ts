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

describe("the console's headers", () => {
  it("give its page and files a strict policy of their own: own script only, no inline, no framing, blob: images", async () => {
    for (const [path, type] of [
      ["/ui", "text/html"],
      ["/ui/console.js", "text/javascript"],
      ["/ui/console.css", "text/css"],
    ] as const) {
      const res = await call("GET", path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get("content-type"), path).toContain(type);
      expect(res.headers.get("referrer-policy"), path).toBe("no-referrer");
      expect(res.headers.get("x-content-type-options"), path).toBe("nosniff");
      const csp = res.headers.get("content-security-policy") ?? "";
      const directives = new Map(
        csp
          .split(";")
          .map((d) => d.trim().split(/\s+/) as [string, ...string[]])
          .map(([k, ...v]) => [k, v.join(" ")]),
      );
      expect(directives.get("default-src"), path).toBe("'none'");
      // The console's own script by hash, never 'self' (which admits every cap's .js file).
      expect(directives.get("script-src"), path).toMatch(/^'sha256-[A-Za-z0-9+/]{43}='$/);
      expect(directives.get("img-src"), path).toBe("blob:");
      expect(directives.get("frame-ancestors"), path).toBe("'none'");
      expect(csp, path).not.toMatch(/unsafe|data:|https?:|\*/);
      const body = await res.text();
      if (type === "text/html") {
        // Every script has a src (the policy would block an inline one anyway), and the page holds no cap.
        expect(body.match(/<script\b[^>]*>/g)).toEqual([
          `<script type="module" src="/ui/console.js" integrity="${directives.get("script-src")!.slice(1, -1)}">`,
        ]);
        expect(body).not.toContain("/object/");
      }
    }
  });
});
