import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../launcher/build-worker.ts";

/** Paths a newcomer's first days create: the vault's state (admin token included), its disk folder, a Python venv. */
const LOCAL_ONLY = [
  ".capvault/admin-token",
  "vault-data/notes.md",
  ".venv/bin/python",
  "clients/python/.venv/pyvenv.cfg",
];

describe(".gitignore", () => {
  it.each(LOCAL_ONLY)("keeps %s out of commits", (file) => {
    // check-ignore prints the path when a rule ignores it (exit 0), nothing otherwise (exit 1).
    const out = execFileSync("git", ["check-ignore", "--no-index", file], { cwd: PROJECT_ROOT, encoding: "utf8" });
    expect(out.trim()).toBe(file);
  });

  it("keeps every file of the state fixtures, a scenario's tmp/ folder included", () => {
    // A fixture is data written by an old build: a file left out of the commit is a fixture that lies.
    const file = "test/fixtures/state/1/543d63e/disk/fixture/tmp/inner/x.txt";
    expect(() => execFileSync("git", ["check-ignore", "--no-index", file], { cwd: PROJECT_ROOT })).toThrow();
  });
});
