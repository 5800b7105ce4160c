import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { KEEP_DONE, KEEP_REFUSED } from "../../durable-objects/audit-log.ts";
import { CAP_MIGRATIONS } from "../../durable-objects/cap-migrations.ts";
import { FORMAT_TABLE, migrateOnWake } from "../../durable-objects/state-migrations.ts";
import type { AuditTrail } from "../../shared/wire-types.ts";
import { capObject } from "./slow-upload.ts";
import { call, cap, child, errorCode, mintRoot } from "./vault.ts";

const trail = async (token: string, extra = "") =>
  ((await (await call("GET", `/object/${token}/audit${extra}`)).json()) as AuditTrail).entries;

describe("audit", () => {
  it("records mutations and reach-past-the-cap refusals, newest first, and no tokens", async () => {
    const fs = cap((await mintRoot("audit/one/")).token);
    await fs.write("notes/a.md", "x");
    await fs.read("notes/a.md");
    await fs.read("../../etc/passwd");
    await fs.read("missing");
    const sub = await child(fs, { path: "notes", rights: ["read"], label: "reader" });
    await sub.write("b.md", "nope");
    await fs.move({ from: "notes/a.md", to: "notes/c.md" });
    await fs.remove("notes/c.md");
    await fs.revokeChild(sub.minted.id);

    const entries = await trail(fs.token);
    expect(entries.map((e) => `${e.op} ${e.path} ${e.outcome}`)).toEqual([
      "revoke_child notes ok",
      "delete notes/c.md ok",
      "move notes/a.md -> notes/c.md ok",
      "subdir notes ok",
      "read ../../etc/passwd path_escapes",
      "write notes/a.md ok",
    ]);
    expect(entries[0]!.child).toBe(sub.minted.id);
    expect(entries[3]!.child).toBe(sub.minted.id);
    expect(Date.parse(entries[0]!.at)).toBeGreaterThan(Date.now() - 60_000);
    const text = JSON.stringify(entries);
    expect(text).not.toContain(sub.token);
    expect(text).not.toContain(fs.token);
    expect(text).not.toContain("audit/one");

    expect((await trail(fs.token, "?limit=2")).length).toBe(2);
    expect(await errorCode(await call("GET", `/object/${fs.token}/audit?limit=0`))).toBe("bad_request");
    // A revoked cap keeps no readable history.
    expect(await errorCode(await call("GET", `/object/${sub.token}/audit`))).toBe("no_such_cap");
  });

  it("a child's refusals are in the child's own trail", async () => {
    const fs = cap((await mintRoot("audit/two/")).token);
    const sub = await child(fs, { path: "x", rights: ["read"] });
    await sub.write("f", "x");
    await sub.read("/etc/shadow");
    expect((await trail(sub.token)).map((e) => `${e.op} ${e.outcome}`)).toEqual([
      "read absolute_path",
      "write forbidden",
    ]);
  });

  it("refusals never push what was done out of the trail: they are kept apart", async () => {
    const fs = cap((await mintRoot("audit/flood/")).token);
    await fs.write("secret.md", "x");
    await fs.remove("secret.md");
    // A holder covering its tracks: a thousand and more cheap refusals, all
    // different, sent straight to the cap's object so the test stays quick.
    const stub = await capObject(fs.token);
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < 1199) await stub.readFile(`../flood/${next++}`, { range: null, ifNoneMatch: null });
      }),
    );
    // The eight senders race each other, so which of their last calls lands
    // last is not theirs to say; one more refusal, sent alone, is the newest.
    await stub.readFile("../flood/1199", { range: null, ifNoneMatch: null });
    const entries = await trail(fs.token);
    expect(entries.filter((e) => e.outcome === "ok").map((e) => `${e.op} ${e.path}`)).toEqual([
      "delete secret.md",
      "write secret.md",
    ]);
    expect(entries.filter((e) => e.outcome !== "ok").length).toBe(KEEP_REFUSED);
    expect(entries[0]!.path).toBe("../flood/1199");
    // Every kept line fits in one answer.
    expect((await call("GET", `/object/${fs.token}/audit?limit=${KEEP_DONE + KEEP_REFUSED}`)).status).toBe(200);
    expect(await errorCode(await call("GET", `/object/${fs.token}/audit?limit=${KEEP_DONE + KEEP_REFUSED + 1}`))).toBe(
      "bad_request",
    );
  }, 120_000);

  it("aggregates an identical refusal into one line with a count, moved up to its latest time", async () => {
    const fs = cap((await mintRoot("audit/repeat/")).token);
    for (let i = 0; i < 30; i++) await fs.read("../../etc/passwd");
    await fs.write("a.md", "x");
    await fs.read("../../etc/passwd");
    await fs.read("/etc/shadow");
    const entries = await trail(fs.token);
    expect(entries.map((e) => `${e.op} ${e.path} ${e.outcome} ${e.count}`)).toEqual([
      "read /etc/shadow absolute_path 1",
      "read ../../etc/passwd path_escapes 31",
      "write a.md ok 1",
    ]);
  }, 60_000);

  it("keeps the lines written before refusals were kept apart (the format 2 migration splits them)", async () => {
    const fs = cap((await mintRoot("audit/old-table/")).token);
    await runInDurableObject(await capObject(fs.token), (_i, state) => {
      // The cap as format 1 left it: the first log table, no format stamp; then its next wake.
      state.storage.sql.exec(`DROP TABLE ${FORMAT_TABLE}`);
      state.storage.sql.exec(`CREATE TABLE audit (seq INTEGER PRIMARY KEY AUTOINCREMENT,
        at INTEGER NOT NULL, op TEXT NOT NULL, path TEXT, outcome TEXT NOT NULL, child TEXT)`);
      state.storage.sql
        .exec("INSERT INTO audit (at, op, path, outcome, child) VALUES (?, 'write', 'old.md', 'ok', NULL)", Date.now())
        .toArray();
      expect(migrateOnWake(state.storage, "cap", CAP_MIGRATIONS, { stampEmpty: false })).toEqual({
        ok: true,
        value: { from: 1, to: 2 },
      });
      const tables = state.storage.sql.exec("SELECT name FROM sqlite_master WHERE name = 'audit'").toArray();
      expect(tables).toEqual([]);
    });
    expect((await trail(fs.token)).map((e) => `${e.op} ${e.path} ${e.count}`)).toEqual(["write old.md 1"]);
    await fs.write("new.md", "x");
    expect((await trail(fs.token)).map((e) => `${e.op} ${e.path} ${e.count}`)).toEqual([
      "write new.md 1",
      "write old.md 1",
    ]);
  }, 60_000);
});
