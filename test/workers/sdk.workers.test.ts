import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { AdminClient, CapError, FsCap } from "../../clients/typescript/index.ts";
import { ADMIN, ORIGIN } from "./vault.ts";

/**
 * The SDK where a Worker runs it: inside workerd, its requests going through
 * a service binding (SELF) to the real worker, Durable Objects and R2. A
 * Worker sends an unframed stream body chunked, with no Content-Length, which
 * the vault refuses (411), so the SDK must frame a stream of known length
 * itself. Its behaviour against the launcher is in test/node/fs-cap.node.test.ts.
 */
const fetchThroughBinding = (input: string, init?: RequestInit) => SELF.fetch(input, init);
const admin = new AdminClient(ORIGIN, ADMIN, { fetch: fetchThroughBinding });

/** A stream that yields `bytes` in chunks of `size`, as an upload from elsewhere would arrive. */
function chunked(bytes: Uint8Array, size: number): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream({
    pull(controller) {
      if (offset >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(offset, offset + size));
      offset += size;
    },
  });
}

describe("the SDK inside workerd, through a service binding", () => {
  it("writes a ReadableStream of known length, and reads back the same bytes", async () => {
    const fs = await admin.mintRoot({ backend: "r2", prefix: "sdk-stream/" });
    const bytes = crypto.getRandomValues(new Uint8Array(60_000));
    const written = await fs.write("blob.bin", chunked(bytes, 16_384), { length: bytes.length });
    expect(written).toMatchObject({ created: true, size: bytes.length });
    expect(await fs.read("blob.bin")).toEqual(bytes);
    expect(await fs.stat("blob.bin")).toMatchObject({ type: "file", size: bytes.length, etag: written.etag });
    // A stream that ends short of its declared length stores nothing.
    await expect(fs.write("short.bin", chunked(bytes.slice(0, 10), 4), { length: 11 })).rejects.toBeInstanceOf(Error);
    await expect(fs.stat("short.bin")).rejects.toMatchObject({ code: "not_found" });
  });

  it("round-trips text, lists, attenuates, refuses hostile paths with typed errors, and revokes", async () => {
    const fs = await admin.mintRoot({ backend: "r2", prefix: "sdk-tour/" });
    await fs.write("notes/a.md", "# a\n");
    expect(await fs.readText("notes/a.md")).toBe("# a\n");
    const names: string[] = [];
    for await (const entry of fs.list("notes")) names.push(entry.name);
    expect(names).toEqual(["a.md"]);

    const reader = await fs.subdir({ path: "notes", rights: ["read", "list"] });
    expect(reader).toBeInstanceOf(FsCap);
    expect(await reader.readText("a.md")).toBe("# a\n");
    await expect(reader.write("b.md", "x")).rejects.toMatchObject({ code: "forbidden", status: 403 });
    await expect(reader.read("../notes/a.md")).rejects.toMatchObject({ code: "path_escapes", status: 400 });

    await reader.revoke();
    const revoked = await reader.read("a.md").catch((error: unknown) => error);
    expect(revoked).toBeInstanceOf(CapError);
    expect(revoked).toMatchObject({ code: "no_such_cap", status: 404 });
    expect(String(revoked)).not.toContain(reader.url.split("/object/")[1]!);
    expect(await fs.readText("notes/a.md")).toBe("# a\n");
  });

  it("lists versions, reads one, restores a deleted file and redacts, with the root's retention", async () => {
    const fs = await admin.mintRoot({ backend: "r2", prefix: "sdk-versions/", keepVersions: 3, keepDays: 7 });
    await fs.write("plan.md", "v1");
    await fs.write("plan.md", "v2");
    await fs.delete("plan.md");
    const { versions, cursor } = await fs.versions("plan.md");
    expect([versions.map((v) => v.operation), cursor]).toEqual([["deleted", "modified", "created"], null]);
    expect(new TextDecoder().decode(await fs.readVersion(versions[2]!.id))).toBe("v1");
    expect(await fs.restore(versions[0]!.id)).toMatchObject({ size: 2 });
    expect(await fs.readText("plan.md")).toBe("v2");
    // keepVersions 3: the restore pushed the oldest out.
    expect((await fs.versions("plan.md")).versions.map((v) => v.operation)).toEqual(["created", "deleted", "modified"]);
    await expect(fs.readVersion(versions[2]!.id)).rejects.toMatchObject({ code: "not_found", status: 404 });
    // The deleted version points at the bytes it took away: redacting "v2" takes them from both.
    await fs.redact(versions[1]!.id);
    await expect(fs.readVersion(versions[0]!.id)).rejects.toMatchObject({ code: "not_found", status: 404 });
    expect((await fs.versions("plan.md")).versions.map((v) => v.redacted)).toEqual([false, true, true]);
    expect(await fs.readText("plan.md")).toBe("v2");
    await expect(fs.readVersion("../1")).rejects.toMatchObject({ code: "not_found" });
  });
});
