import { describe, expect, it } from "vitest";
import { cap, child, errorCode, mintRoot } from "./vault.ts";

// Every file carries the SHA-256 of its bytes, computed while they stream in,
// so a client can state "replace it only if it is still these bytes" from the
// bytes alone (If-Match: "sha256:<hex>"), without asking for the etag first.

let counter = 0;

async function sha256Hex(bytes: string | Uint8Array): Promise<string> {
  const data = typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes;
  const digest = await crypto.subtle.digest("SHA-256", data);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

describe.each(["r2", "disk"] as const)("%s backend", (backend) => {
  const freshRoot = async () => cap((await mintRoot(`hashes/${++counter}/`, { backend })).token);

  it("write, stat, list and a moved file all report the SHA-256 of the bytes", async () => {
    const root = await freshRoot();
    // Larger than any one chunk, so the hash is built across chunks as they stream.
    const big = new Uint8Array(200 * 1024 + 17).map((_, i) => (i * 31) % 251);
    const cases: [string, string | Uint8Array][] = [
      ["a/small.txt", "hello"],
      ["a/empty.txt", ""],
      ["a/big.bin", big],
    ];
    for (const [path, bytes] of cases) {
      const expected = await sha256Hex(bytes);
      const res = await root.write(path, bytes);
      expect(res.status).toBe(201);
      expect(await res.json()).toMatchObject({ sha256: expected });
      expect(await (await root.stat(path)).json()).toMatchObject({ type: "file", sha256: expected });
    }
    const listed = (await (await root.list("a")).json()) as { entries: { name: string; sha256?: string }[] };
    expect(listed.entries.map((e) => [e.name, e.sha256])).toEqual([
      ["big.bin", await sha256Hex(big)],
      ["empty.txt", await sha256Hex("")],
      ["small.txt", await sha256Hex("hello")],
    ]);

    expect((await root.move({ from: "a/small.txt", to: "b/moved.txt" })).status).toBe(200);
    expect(await (await root.stat("b/moved.txt")).json()).toMatchObject({ sha256: await sha256Hex("hello") });
  });

  it("a cap without read sees no sha256 (an unkeyed hash tests guesses), in stat and list", async () => {
    const root = await freshRoot();
    await root.write("pin.txt", "4821");
    const hash = await sha256Hex("4821");
    expect(await (await root.stat("pin.txt")).json()).toMatchObject({ sha256: hash });
    const lister = await child(root, { path: "", rights: ["list"] });
    const stat = await (await lister.stat("pin.txt")).text();
    const list = await (await lister.list("")).text();
    for (const text of [stat, list]) {
      expect(text).not.toContain("sha256");
      expect(text).not.toContain(hash);
    }
  });

  it('If-Match: "sha256:<hex>" replaces only the bytes it names; quotes optional, either case of hex', async () => {
    const root = await freshRoot();
    await root.write("doc.md", "v1");
    const v1 = await sha256Hex("v1");

    const stale = await root.write("doc.md", "v2", { "if-match": `"sha256:${await sha256Hex("v0")}"` });
    expect(stale.status).toBe(412);
    expect(await (await root.read("doc.md")).text()).toBe("v1");

    expect((await root.write("doc.md", "v2", { "if-match": `"sha256:${v1}"` })).status).toBe(200);
    expect(
      (await root.write("doc.md", "v3", { "if-match": `sha256:${(await sha256Hex("v2")).toUpperCase()}` })).status,
    ).toBe(200);
    // One of a list, beside an etag that no longer matches.
    const listed = await root.write("doc.md", "v4", { "if-match": `"0123", "sha256:${await sha256Hex("v3")}"` });
    expect(listed.status).toBe(200);
    // A hash never matches a missing file.
    expect((await root.write("new.md", "x", { "if-match": `"sha256:${v1}"` })).status).toBe(412);
    expect((await root.stat("new.md")).status).toBe(404);
    expect(await (await root.read("doc.md")).text()).toBe("v4");
  });

  it("a malformed sha256 condition is a 400 and changes nothing", async () => {
    const root = await freshRoot();
    await root.write("doc.md", "v1");
    const v1 = await sha256Hex("v1");
    for (const header of ['"sha256:"', `"sha256:${v1.slice(1)}"`, `"sha256:${v1}0"`, `"SHA256:${"g".repeat(64)}"`]) {
      const res = await root.write("doc.md", "v2", { "if-match": header });
      expect(res.status).toBe(400);
      expect(await errorCode(res)).toBe("bad_request");
    }
    const refusedNew = await root.write("other.md", "x", { "if-none-match": '"sha256:zz"' });
    expect(refusedNew.status).toBe(400);
    expect((await root.stat("other.md")).status).toBe(404);
    expect(await (await root.read("doc.md")).text()).toBe("v1");
  });
});
