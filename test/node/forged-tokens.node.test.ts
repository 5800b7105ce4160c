import { randomBytes } from "node:crypto";
import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { refusal } from "../../shared/refusals.ts";
import { base32 } from "../../shared/token.ts";
import { startTestVault, type TestVault } from "./test-vault.ts";

let vault: TestVault;

beforeAll(async () => {
  vault = await startTestVault();
});
afterAll(async () => {
  await vault?.stop();
});

/** Every file under `dir` with its size: what a flood of requests could have added. */
async function snapshot(dir: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    // SQLite removes an idle object's -wal and -shm files on its own time.
    const size = await stat(full).then(
      (s) => s.size,
      () => null,
    );
    if (size !== null) out.set(path.relative(dir, full), size);
  }
  return out;
}

/** Bytes per Durable Object: its database with its `-wal` and `-shm` files. */
function perObject(files: Map<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [file, size] of files) {
    const object = file.replace(/-(wal|shm)$/, "");
    out.set(object, (out.get(object) ?? 0) + size);
  }
  return out;
}

/** Forgeries: made up at today's length, at the length tokens had before they were signed, and a real token tampered with. */
function forgery(i: number, real: string): string {
  if (i % 3 === 0) return base32(randomBytes(30));
  if (i % 3 === 1) return base32(randomBytes(20));
  const at = i % real.length;
  return real.slice(0, at) + (real[at] === "a" ? "b" : "a") + real.slice(at + 1);
}

const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

describe("forged tokens", () => {
  it("1,000 forged tokens over every kind of route add nothing to the state folder", async () => {
    const real = vault.rootCapUrl.split("/object/")[1]!;
    const objects = path.join(vault.state, "durable-objects");
    // The state is settled once the root cap answers; the snapshot is taken after.
    expect((await fetch(vault.rootCapUrl)).status).toBe(200);
    const before = await snapshot(objects);
    expect(before.size).toBeGreaterThan(0);

    const routes: ((base: string) => Promise<Response>)[] = [
      (base) => fetch(base),
      (base) => fetch(`${base}/file?path=a.txt`),
      (base) => fetch(`${base}/file?path=a.txt`, { method: "PUT", body: "forged write" }),
      (base) => fetch(`${base}/file?path=a.txt`, { method: "DELETE" }),
      (base) => fetch(base, { method: "DELETE" }),
      (base) => fetch(`${base}/subdir`, { method: "POST", body: JSON.stringify({ path: "" }) }),
      (base) =>
        fetch(`${base}/mcp`, {
          method: "POST",
          headers: MCP_HEADERS,
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
        }),
      (base) =>
        fetch(`${base}/memory`, { method: "POST", body: JSON.stringify({ command: "view", path: "/memories" }) }),
    ];
    const answers = new Set<string>();
    // Ten at a time: enough to be quick, few enough to stay fair on a shared machine.
    for (let batch = 0; batch < 100; batch++) {
      await Promise.all(
        Array.from({ length: 10 }, async (_, j) => {
          const i = batch * 10 + j;
          const res = await routes[i % routes.length]!(`${vault.url}/object/${forgery(i, real)}`);
          answers.add(`${res.status} ${await res.text()}`);
        }),
      );
    }
    // Every forgery answers as an unknown cap, but the 32-character ones, which get format 0's one answer.
    expect([...answers].sort()).toEqual([
      `404 {"error":{"code":"no_such_cap","message":"no such capability"}}\n`,
      `410 ${JSON.stringify({ error: refusal("legacyToken") })}\n`,
    ]);

    const after = await snapshot(objects);
    expect([...after.keys()].filter((file) => !before.has(file))).toEqual([]);
    // SQLite may fold a write-ahead log into its database meanwhile, which moves
    // bytes between an object's files; so sizes are compared per object: none grew.
    const grown = [...perObject(after)].filter(([object, bytes]) => bytes > (perObject(before).get(object) ?? 0));
    expect(grown).toEqual([]);
    // Nothing was written through the real cap either.
    expect((await fetch(`${vault.rootCapUrl}/file?path=a.txt`)).status).toBe(404);
  }, 300_000);

  it("keeps the token key in the state folder, owner only", async () => {
    const file = path.join(vault.state, "token-key");
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(Buffer.from((await readFile(file, "utf8")).trim(), "base64url").length).toBeGreaterThanOrEqual(32);
  });
});
