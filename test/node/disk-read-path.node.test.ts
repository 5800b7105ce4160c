/**
 * Reads through a cap on the real launcher, now that the cap's object only
 * decides a read and the worker performs it: a link leading out of the disk
 * root is still refused and still audited (by the object, as before), and
 * revocation still stops every read asked after it answered, on both backends.
 */
import { mkdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mcpClients } from "./mcp-client.ts";
import { type SharedVault, sharedVault } from "./shared-vault.ts";

let vault: SharedVault;
const SECRET = "SECRET-OUTSIDE-THE-DISK-ROOT";

beforeAll(async () => {
  vault = await sharedVault("disk-read-path");
});

const mcp = mcpClients();
afterAll(() => mcp.closeAll());

async function json(res: Response): Promise<any> {
  return res.json();
}

describe("a read the worker performs for the cap", () => {
  it("through a link leading out of the disk root is outside_root, reads nothing, and leaves an audit line", async () => {
    const outside = path.join(path.dirname(vault.diskRoot), "outside-read");
    await mkdir(outside, { recursive: true });
    await writeFile(path.join(outside, "secret.txt"), SECRET);
    await symlink(path.join(outside, "secret.txt"), path.join(vault.diskRoot, "leak.txt"));

    const res = await fetch(`${vault.diskCapUrl}/file?path=leak.txt`);
    const text = await res.text();
    expect(res.status).toBe(403);
    expect(JSON.parse(text).error.code).toBe("outside_root");
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(outside);

    const audit = await json(await fetch(`${vault.diskCapUrl}/audit`));
    expect(audit.entries[0]).toMatchObject({ op: "read", path: "leak.txt", outcome: "outside_root" });
  });

  it("over MCP, read_file and read_media_file through such a link are outside_root, read nothing, and are audited", async () => {
    const outside = path.join(path.dirname(vault.diskRoot), "outside-mcp");
    await mkdir(path.join(vault.diskRoot, "mcp-links"), { recursive: true });
    await mkdir(outside, { recursive: true });
    await writeFile(path.join(outside, "secret.txt"), SECRET);
    await symlink(path.join(outside, "secret.txt"), path.join(vault.diskRoot, "mcp-links", "leak.txt"));
    const child = await json(
      await fetch(`${vault.diskCapUrl}/subdir`, { method: "POST", body: JSON.stringify({ path: "mcp-links" }) }),
    );
    const client = await mcp.connect(child.url);
    for (const tool of ["read_file", "read_media_file"]) {
      const answer = await mcp.call(client, tool, { path: "leak.txt" });
      expect(answer).toMatchObject({ isError: true, text: "outside_root: resolved outside root" });
    }
    expect(mcp.seen.join("\n")).not.toContain(SECRET);
    expect(mcp.seen.join("\n")).not.toContain(outside);
    // The same refusal twice in a row is one audit line, counted twice.
    const audit = await json(await fetch(`${child.url}/audit`));
    expect(audit.entries).toMatchObject([{ op: "read", path: "leak.txt", outcome: "outside_root", count: 2 }]);
  });

  it("a plain not_found read leaves no audit line", async () => {
    const child = await json(
      await fetch(`${vault.diskCapUrl}/subdir`, { method: "POST", body: JSON.stringify({ path: "quiet" }) }),
    );
    expect((await fetch(`${child.url}/file?path=missing.txt`)).status).toBe(404);
    expect((await json(await fetch(`${child.url}/audit`))).entries).toEqual([]);
  });

  for (const backend of ["r2", "disk"] as const) {
    it(`on ${backend}: once revocation answered, no read through the cap or its child starts`, async () => {
      const root = backend === "r2" ? vault.rootCapUrl : vault.diskCapUrl;
      const minted = await json(
        await fetch(`${root}/subdir`, { method: "POST", body: JSON.stringify({ path: `rv-${backend}` }) }),
      );
      const grand = await json(await fetch(`${minted.url}/subdir`, { method: "POST", body: "{}" }));
      const put = await fetch(`${minted.url}/file?path=f.txt`, { method: "PUT", body: "hello" });
      expect(put.status).toBe(201);
      // Reads in flight while the revocation runs may finish either way; none may start after it answered.
      const racing = Array.from({ length: 8 }, () => fetch(`${grand.url}/file?path=f.txt`).then((r) => r.text()));
      expect((await fetch(minted.url, { method: "DELETE" })).status).toBe(204);
      for (const cap of [minted.url, grand.url]) {
        const res = await fetch(`${cap}/file?path=f.txt`);
        expect(res.status).toBe(404);
        expect((await json(res)).error.code).toBe("no_such_cap");
      }
      for (const body of await Promise.all(racing)) expect(body === "hello" || body.includes("no_such_cap")).toBe(true);
    });
  }
});
