/**
 * The format-0 fixture (test/fixtures/state/0/5055285: state written by
 * commit 5055285's own launcher, unsigned 32-character tokens) opened by
 * today's launcher, end to end: every old token answers 410 legacy_token,
 * `capvault reissue-legacy` re-issues the caps that were alive, on R2 and on
 * disk, and the new URLs reach the same files, rights and tree, across a
 * restart; a rerun prints nothing (docs/upgrading.md).
 */
import { cp, mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AdminClient } from "../../clients/typescript/admin-client.ts";
import { PROJECT_ROOT } from "../../launcher/build-worker.ts";
import { refusal } from "../../shared/refusals.ts";
import { digestToken } from "../../shared/token.ts";
import type { ReissuedCap } from "../../shared/wire-types.ts";
import { runInProcess } from "../cli-test-io.ts";
import type { FixtureManifest } from "../fixtures/state/fixture-manifest.ts";
import { startTestVault, type TestVault } from "./test-vault.ts";

const FIXTURE = path.join(PROJECT_ROOT, "test/fixtures/state/0/5055285");
let manifest: FixtureManifest;
let vault: TestVault;
let copy: string;

beforeAll(async () => {
  manifest = JSON.parse(await readFile(path.join(FIXTURE, "manifest.json"), "utf8"));
  // Today's code opens a copy: the committed fixture stays as 5055285 wrote it.
  copy = await mkdtemp(path.join(os.tmpdir(), "capvault-format0-"));
  await cp(path.join(FIXTURE, "state"), path.join(copy, "state"), { recursive: true });
  await cp(path.join(FIXTURE, "disk"), path.join(copy, "disk"), { recursive: true });
  vault = await startTestVault({
    env: { CAPVAULT_STATE: path.join(copy, "state"), CAPVAULT_DISK_ROOT: path.join(copy, "disk") },
  });
}, 120_000);
afterAll(async () => {
  await vault?.stop();
  if (copy) await rm(copy, { recursive: true, force: true });
});

const LEGACY = `${JSON.stringify({ error: refusal("legacyToken") })}\n`;
const BACKENDS = ["r2", "disk"] as const;

function reissue(...args: string[]) {
  return runInProcess(["reissue-legacy", "--admin-token-file", path.join(copy, "state/admin-token"), ...args], {
    env: { CAPVAULT_URL: vault.url },
  });
}

/** `OLD-ID<TAB>URL<TAB>LABEL` lines, by old id. */
function table(out: string): Map<string, string> {
  return new Map(
    out
      .split("\n")
      .filter(Boolean)
      .map((line) => line.split("\t") as [string, string]),
  );
}

let rows: Map<string, Pick<ReissuedCap, "oldId" | "url" | "id" | "parent">>;
const rowOf = (id: string) => {
  const row = rows.get(id);
  if (!row) throw new Error(`cap ${id} was not re-issued`);
  return row;
};
const urlOf = (id: string) => rowOf(id).url;
const text = async (res: Response) => `${res.status} ${await res.text()}`;

describe("a format-0 vault opened by today's launcher", () => {
  it("answers every old token, live or dead, 410 legacy_token, and recorded when it left format 0", async () => {
    for (const backend of BACKENDS) {
      const b = manifest.backends[backend];
      for (const c of [b.root, b.readOnly, b.rwChild, b.grandchild, b.revoked.child, b.expiring]) {
        expect(await text(await fetch(`${vault.url}/object/${c.token}/file?path=x`)), c.id).toBe(`410 ${LEGACY}`);
      }
    }
    const cutoff = Number(await readFile(path.join(copy, "state/format-0-until"), "utf8"));
    expect(cutoff).toBeGreaterThan(Date.parse(manifest.builtAt));
  });

  it("refuses a bad --minted-before before asking the vault", async () => {
    const run = await reissue("--minted-before", "last tuesday");
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--minted-before takes an ISO 8601 time");
  });

  it("capvault reissue-legacy re-issues the live caps of both backends in its table, also after a kill -9 between its steps", async () => {
    // A run's first step, whose answer never reached anyone: the vault is killed before it is acknowledged.
    const first = await new AdminClient(vault.url, manifest.adminToken).reissueLegacyStep();
    expect(first.reissued.length).toBeGreaterThan(0);
    await vault.kill();
    await vault.restart();
    const run = await reissue();
    expect(run.code).toBe(0);
    // The table, each new cap then asked who it is (its id, its parent's).
    rows = new Map();
    for (const [oldId, url] of table(run.out)) {
      const info = (await (await fetch(url)).json()) as { id: string; parent: string | null };
      rows.set(oldId, { oldId, url, id: info.id, parent: info.parent });
    }
    // The launcher's own format-0 roots (R2 default/, the whole disk folder), and the scenario's on each backend.
    const launcher = await Promise.all(
      Object.values(manifest.launcherRoots).map(async (url) => (await digestToken(url.split("/object/")[1]!)).id),
    );
    for (const id of launcher) expect(rowOf(id)).toMatchObject({ parent: null });
    for (const backend of BACKENDS) {
      const b = manifest.backends[backend];
      expect(rowOf(b.root.id)).toMatchObject({ parent: null });
      expect(rowOf(b.readOnly.id)).toMatchObject({ parent: rowOf(b.root.id).id });
      expect(rowOf(b.rwChild.id)).toMatchObject({ parent: rowOf(b.root.id).id });
      expect(rowOf(b.grandchild.id)).toMatchObject({ parent: rowOf(b.rwChild.id).id });
      for (const c of [b.root, b.readOnly, b.rwChild, b.grandchild])
        expect(urlOf(c.id)).toMatch(/\/object\/[a-z2-7]{48}$/);
      // Revoked and expired caps stay dead: nothing to re-issue.
      for (const c of [b.revoked.child, b.revoked.grandchild, b.expiring]) expect(rows.has(c.id), c.id).toBe(false);
    }
    expect(rows.size).toBe(launcher.length + 8);
    // What the lost answer held is handed again, with the same URLs.
    for (const cap of first.reissued)
      expect(rowOf(cap.oldId)).toMatchObject({ url: cap.url, id: cap.id, parent: cap.parent });
    expect(run.stderr).toBe(`re-issued ${rows.size} caps of state format 0; their old tokens open nothing now\n`);
  }, 120_000);

  it("the new caps reach the same files with the same rights and tree, and history goes on", async () => {
    for (const backend of BACKENDS) {
      const b = manifest.backends[backend];
      const root = urlOf(b.root.id);
      for (const file of b.files.filter((f) => !f.path.startsWith("tmp/"))) {
        expect(await text(await fetch(`${root}/file?path=${file.path}`)), `${backend} ${file.path}`).toBe(
          `200 ${file.content}`,
        );
      }
      const readOnly = urlOf(b.readOnly.id);
      expect(await text(await fetch(`${readOnly}/file?path=readme.md`))).toBe("200 # Docs\n\nsecond\n");
      expect((await fetch(`${readOnly}/file?path=new.md`, { method: "PUT", body: "x" })).status).toBe(403);
      const grandchild = urlOf(b.grandchild.id);
      expect(await text(await fetch(`${grandchild}/file?path=g.txt`))).toBe("200 grandchild v2\n");
      const info = (await (await fetch(grandchild)).json()) as { id: string; parent: string; rights: string[] };
      expect(info).toMatchObject({ id: rowOf(b.grandchild.id).id, parent: rowOf(b.rwChild.id).id });
      expect(info.rights).toEqual(b.grandchild.rights);
      const children = (await (await fetch(`${root}/children`)).json()) as { children: { id: string; path: string }[] };
      expect(children.children.map((c) => `${c.id} ${c.path}`).sort()).toEqual(
        [`${rowOf(b.readOnly.id).id} docs`, `${rowOf(b.rwChild.id).id} work`].sort(),
      );
      // Writes go on, become versions, and the child mints below itself.
      const rw = urlOf(b.rwChild.id);
      expect((await fetch(`${rw}/file?path=plan.txt`, { method: "PUT", body: "plan v2\n" })).status).toBe(200);
      const versions = (await (await fetch(`${rw}/versions?path=plan.txt`)).json()) as { versions: unknown[] };
      expect(versions.versions.length).toBeGreaterThanOrEqual(1);
      const sub = await fetch(`${rw}/subdir`, {
        method: "POST",
        body: JSON.stringify({ path: "sub", rights: ["read"] }),
      });
      expect(sub.status).toBe(201);
      // MCP reads through a re-issued cap.
      const mcp = await fetch(`${root}/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "read_text_file", arguments: { path: b.mcpFile.path } },
        }),
      });
      expect(await mcp.text()).toContain(JSON.stringify(b.mcpFile.content).slice(1, -1));
      // The old tokens open nothing, as before.
      expect(await text(await fetch(`${vault.url}/object/${b.root.token}`))).toBe(`410 ${LEGACY}`);
    }
  });

  it("a rerun re-issues nothing, and the new caps outlive a restart", async () => {
    const again = await reissue("--json");
    expect(again.code).toBe(0);
    expect(JSON.parse(again.out)).toEqual({ reissued: [] });
    expect(again.stderr).toBe("no caps of state format 0 left to re-issue\n");
    await vault.restart();
    const b = manifest.backends.r2;
    expect(await text(await fetch(`${urlOf(b.readOnly.id)}/file?path=data.json`))).toBe('200 {"fixture":true}\n');
    expect((await reissue()).out).toBe("");
  }, 120_000);
});
