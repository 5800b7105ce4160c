/**
 * Every cap route takes a holder's proof. A route missing from the proved
 * list answers a bound cap as an unknown one (fail closed), so the miss shows
 * only as a feature that silently does not work for bound caps: twice this
 * round (content search, line reads). This reads the app's own route table.
 */
import { describe, expect, it } from "vitest";
import { app } from "../../worker/app.ts";
import { provedRoute } from "../../worker/holder-proof.ts";

/** WebDAV refuses bound caps by design (docs/holder-bound.md): it has no way to carry a proof. */
const NOT_PROVED = /^\/dav(\/|$)/;

describe("the proved routes", () => {
  it("list every method and path a cap serves below /object/<token>", () => {
    const served = app.routes
      .filter((r) => r.path.startsWith("/object/:token") && r.method !== "ALL")
      .map((r) => ({ method: r.method, rest: r.path.slice("/object/:token".length).replace(/:[a-z]+/gi, "x") }))
      .filter((r) => !NOT_PROVED.test(r.rest) && r.rest !== "/*");
    expect(served.length).toBeGreaterThan(20);
    const missing = served.filter((r) => !provedRoute(r.method, r.rest)).map((r) => `${r.method} ${r.rest}`);
    expect(missing).toEqual([]);
  });
});
