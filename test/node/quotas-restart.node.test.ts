/**
 * Quotas across a restart of the real launcher: the counts live in the root
 * journal's SQLite, written in the same transaction as each commit, so after
 * 32 racing writers and a restart a root shows the same usage (what is
 * really stored), still refuses what does not fit, and keeps counting.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CapInfo, ListPage } from "../../shared/wire-types.ts";
import { mintRoot, startTestVault, type TestVault } from "./test-vault.ts";

let vault: TestVault;

beforeAll(async () => {
  vault = await startTestVault();
});
afterAll(async () => {
  await vault?.stop();
});

const q = (p: string) => `?path=${encodeURIComponent(p)}`;

async function mint(backend: "r2" | "disk", maxBytes: number): Promise<string> {
  return (await mintRoot(vault, { backend, prefix: `quota-${backend}`, maxBytes })).url;
}

const put = (cap: string, path: string, body: string) => fetch(`${cap}/file${q(path)}`, { method: "PUT", body });
const info = async (cap: string) => ((await (await fetch(cap)).json()) as CapInfo).usage;
async function stored(cap: string): Promise<{ bytes: number; files: number }> {
  const page = (await (await fetch(`${cap}/list${q("")}&depth=0`)).json()) as ListPage;
  const sizes = page.entries.map((e) => (e as { size?: number }).size ?? 0);
  return { bytes: sizes.reduce((a, b) => a + b, 0), files: sizes.length };
}

describe("quotas across a restart", () => {
  it("32 racing writers stay within the limit, and the count after a restart equals the count before", async () => {
    const caps = { r2: await mint("r2", 1000), disk: await mint("disk", 1000) };
    // Which ten writers win is the race's to decide: remember one winner per
    // cap, and delete that one after the restart (r/0 may well have lost).
    const winner = new Map<string, string>();
    for (const cap of Object.values(caps)) {
      const race = await Promise.all(Array.from({ length: 32 }, (_, i) => put(cap, `r/${i}.bin`, "z".repeat(100))));
      expect(race.filter((r) => r.status === 201)).toHaveLength(10);
      winner.set(cap, `r/${race.findIndex((r) => r.status === 201)}.bin`);
      expect(race.filter((r) => r.status === 507)).toHaveLength(22);
      // Nothing superseded yet: usage is exactly what the listing shows.
      expect(await info(cap)).toEqual(await stored(cap));
      expect(await info(cap)).toEqual({ bytes: 1000, files: 10 });
    }
    await vault.restart();
    for (const cap of Object.values(caps)) {
      expect(await info(cap)).toEqual({ bytes: 1000, files: 10 });
      expect((await put(cap, "late.bin", "z")).status).toBe(507);
      // Deleted bytes stay as a kept version: still counted after the restart.
      expect((await fetch(`${cap}/file${q(winner.get(cap) ?? "")}`, { method: "DELETE" })).status).toBe(204);
      expect(await info(cap)).toEqual({ bytes: 1000, files: 9 });
      expect((await put(cap, "late.bin", "z")).status).toBe(507);
    }
  });
});
