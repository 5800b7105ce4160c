import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadAdminToken, markAdminTokenShown } from "./admin-token.ts";

let state: string;
beforeEach(async () => {
  state = await mkdtemp(path.join(os.tmpdir(), "capvault-admin-token-"));
});
afterEach(async () => {
  await rm(state, { recursive: true, force: true });
});

describe("loadAdminToken", () => {
  it("keeps a generated token fresh until it has been shown, then never again", async () => {
    const first = await loadAdminToken(state, null);
    expect(first.fresh).toBe(true);
    expect((await readFile(path.join(state, "admin-token"), "utf8")).trim()).toBe(first.token);
    // The first start failed (its port taken) before printing: the retry shows the same token.
    expect(await loadAdminToken(state, null)).toEqual({ token: first.token, fresh: true });
    await markAdminTokenShown(state);
    expect(await loadAdminToken(state, null)).toEqual({ token: first.token, fresh: false });
  });

  it("never calls a configured token or the operator's own file fresh", async () => {
    const given = "g".repeat(40);
    expect(await loadAdminToken(state, given)).toEqual({ token: given, fresh: false });
    const own = path.join(state, "mine");
    await import("node:fs/promises").then((fs) => fs.writeFile(own, `${"o".repeat(40)}\n`));
    expect(await loadAdminToken(state, null, own)).toEqual({ token: "o".repeat(40), fresh: false });
  });
});
