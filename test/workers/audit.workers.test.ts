import { describe, expect, it } from "vitest";
import { call, cap, child, errorCode, mintRoot } from "./vault.ts";

interface Entry {
  at: string;
  op: string;
  path: string | null;
  outcome: string;
  child: string | null;
}

const trail = async (token: string, extra = "") =>
  ((await (await call("GET", `/object/${token}/audit${extra}`)).json()) as { entries: Entry[] }).entries;

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
    expect((await trail(sub.token)).map((e) => `${e.op} ${e.outcome}`)).toEqual(["read absolute_path", "write forbidden"]);
  });
});
