/**
 * A kill -9 while old state migrates (issue 33): today's launcher starts on a
 * copy of the last format-1 fixture, every cap of it is asked at once (each
 * object migrates as it wakes), and the whole process group is killed at a
 * spread of moments into that burst. After each kill the vault starts again
 * on what the kill left, and must serve all of it; and every object's
 * database must hold either the old format whole or the new one whole.
 *
 * What makes a migration atomic is that it runs in one SQLite transaction
 * (state-migrations.ts): the workers test of a migration that throws halfway
 * shows the rollback deterministically. A kill cannot be aimed inside a
 * transaction of a fraction of a millisecond; this test shows what a real
 * kill during the wake-up burst leaves, at moments before, during and after it.
 */
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { FixtureManifest } from "../fixtures/state/fixture-manifest.ts";
import { startTestVault, type TestVault } from "./test-vault.ts";

const FIXTURE = path.resolve(import.meta.dirname, "../fixtures/state/1/543d63e");
const manifest = JSON.parse(readFileSync(path.join(FIXTURE, "manifest.json"), "utf8")) as FixtureManifest;

/** Per CapObject database: its tables, its keys, and its format row (null: none). */
type ObjectState = { tables: string[]; keys: string[]; format: number | null };

/** Reads every cap object's database of a state folder with Python's sqlite3 (the runtime's files, as left). */
function capObjects(state: string): Record<string, ObjectState> {
  const script = `
import glob, json, os, sqlite3, sys
out = {}
for f in sorted(glob.glob(os.path.join(sys.argv[1], "durable-objects", "*CapObject", "*.sqlite"))):
    if f.endswith("metadata.sqlite"): continue
    c = sqlite3.connect(f)
    tables = sorted(r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'") if not r[0].startswith(("_cf_", "sqlite_")))
    keys = sorted(r[0] for r in c.execute("SELECT key FROM _cf_KV")) if "_cf_KV" in [r[0] for r in c.execute("SELECT name FROM sqlite_master")] else []
    fmt = None
    if "capvault_format" in tables:
        row = c.execute("SELECT format FROM capvault_format WHERE store = 'cap'").fetchone()
        fmt = row[0] if row else None
    out[os.path.basename(f)] = {"tables": tables, "keys": keys, "format": fmt}
    c.close()
print(json.dumps(out))
`;
  return JSON.parse(execFileSync("python3", ["-c", script, state], { encoding: "utf8" })) as Record<
    string,
    ObjectState
  >;
}

/** The fixture's objects as committed, read from a copy (opening a database checkpoints its WAL into it). */
const before = (() => {
  const copy = mkdtempSync(path.join(os.tmpdir(), "capvault-fixture-read-"));
  try {
    cpSync(path.join(FIXTURE, "state"), copy, { recursive: true });
    return capObjects(copy);
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
})();

/** Every request that wakes an object of the fixture: each cap's info, each file, each folder. */
function burst(url: string): Promise<unknown>[] {
  const asks: Promise<unknown>[] = [];
  const ask = (p: string) =>
    asks.push(
      fetch(url + p)
        .then((r) => r.arrayBuffer())
        .catch(() => null),
    );
  for (const backend of Object.values(manifest.backends)) {
    const caps = [backend.root, backend.readOnly, backend.rwChild, backend.grandchild, backend.holder].filter(
      (c) => c !== null,
    );
    for (const cap of caps) ask(`/object/${cap.token}`);
    for (const file of backend.files) ask(`/object/${backend.root.token}/file?path=${encodeURIComponent(file.path)}`);
    ask(`/object/${backend.root.token}/children`);
  }
  return asks;
}

/** What the fixture's caps must answer, whatever the kill left. */
async function expectWhole(vault: TestVault) {
  for (const [name, backend] of Object.entries(manifest.backends)) {
    const root = `${vault.url}/object/${backend.root.token}`;
    for (const file of backend.files) {
      const res = await fetch(`${root}/file?path=${encodeURIComponent(file.path)}`);
      expect(res.status, `${name} ${file.path}`).toBe(200);
      expect(await res.text()).toBe(file.content);
    }
    const kids = (await (await fetch(`${root}/children`)).json()) as { children: { id: string }[] };
    expect(kids.children.map((c) => c.id)).toEqual(expect.arrayContaining([backend.readOnly.id, backend.rwChild.id]));
    const readOnly = `${vault.url}/object/${backend.readOnly.token}`;
    const refused = await fetch(`${readOnly}/file?path=x.md`, { method: "PUT", body: "x" });
    expect(refused.status).toBe(403);
    const grandchild = await fetch(`${vault.url}/object/${backend.grandchild.token}`);
    expect(grandchild.status).toBe(200);
    const dead = await fetch(`${vault.url}/object/${backend.revoked.grandchild.token}`);
    expect(dead.status).toBe(404);
    const versioned = backend.files.find((f) => f.versions && f.versions.length > 1);
    if (versioned) {
      const page = (await (await fetch(`${root}/versions?path=${encodeURIComponent(versioned.path)}`)).json()) as {
        versions: { id: string }[];
      };
      expect(page.versions.map((v) => v.id)).toEqual(expect.arrayContaining(versioned.versions!));
    }
  }
}

/** Every object's database is the fixture's own (format 1, untouched) or wholly format 2: never a mix. */
function expectNoMix(state: string) {
  for (const [file, now] of Object.entries(capObjects(state))) {
    const old = before[file];
    if (now.format === null) {
      // Not migrated: what the fixture held, or empty (an expired cap's alarm, a finished cascade, an object never minted).
      const empty = now.tables.length === 0 && now.keys.length === 0;
      if (old && !empty)
        expect({ tables: now.tables, keys: now.keys }, file).toEqual({ tables: old.tables, keys: old.keys });
      continue;
    }
    expect(now.format, file).toBe(2);
    // Format 2 has no pre-split audit table, and children always with their count.
    expect(now.tables, file).not.toContain("audit");
    if (now.keys.some((k) => k.startsWith("child:"))) expect(now.keys, file).toContain("childCount");
  }
}

describe("a kill -9 while a format 1 vault's objects migrate", () => {
  let vault: TestVault | undefined;
  afterEach(async () => {
    await vault?.stop();
    vault = undefined;
  });

  // Moments after the burst starts: before any object woke, and in the thick of the first wakes.
  it.each([0, 40])(
    "killed %i ms into the burst: the restart serves everything, no object is half-migrated",
    async (delay) => {
      vault = await startTestVault({
        from: { state: path.join(FIXTURE, "state"), diskRoot: path.join(FIXTURE, "disk") },
      });
      const asks = burst(vault.url);
      await new Promise((resolve) => setTimeout(resolve, delay));
      await vault.kill();
      await Promise.all(asks);
      expectNoMix(vault.state);
      await vault.restart();
      await expectWhole(vault);
      // Killed again once the checks woke everything: what they woke is format 2, whole.
      await vault.kill();
      expectNoMix(vault.state);
      const migrated = Object.values(capObjects(vault.state)).filter((o) => o.format === 2);
      expect(migrated.length).toBeGreaterThanOrEqual(6);
    },
    // Two launcher starts (each bundles the worker: about 10 s of CPU on a loaded 2-core machine).
    180_000,
  );
});
