/**
 * Kept versions on a real folder: a write that keeps its bytes hard-links
 * the file it renames into place into `<base>/.capvault-versions/`, so the
 * live file stays a plain file and keeping costs no copy; a refused or failed
 * write keeps nothing; no listing and no cap path reaches the versions.
 */

import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { encodeCallHead } from "../../storage-adapters/disk-protocol.ts";
import type { Root } from "../../storage-adapters/storage-adapter.ts";
import { newBlobName } from "../../storage-adapters/version-blobs.ts";
import { dirAt, fileAt } from "../checked-paths.ts";
import { bodyOf, expectCode, expectOk, fixtureEach } from "./disk-fixture.ts";

const ROOT: Root = ["r/"];
const fx = fixtureEach(ROOT, { checked: true });

const keep = (path: string, text: string, extra: Record<string, string> = {}) => {
  const blob = newBlobName();
  const written = fx.storage.write(fileAt(ROOT, path), bodyOf(text), {
    length: Buffer.byteLength(text),
    contentType: "text/plain",
    keepAs: blob,
    ...extra,
  });
  return { blob, written };
};
const versions = () => readdir(join(fx.base, ".capvault-versions"));
const text = async (stream: ReadableStream<Uint8Array>) => new Response(stream).text();

describe("kept versions on disk", () => {
  it("links the written inode: the live file stays plain, the old bytes stay readable after a replace", async () => {
    const first = keep("notes/a.md", "first");
    expect(expectOk(await first.written)).toMatchObject({ created: true, kept: true });
    const live = await stat(join(fx.base, "r/notes/a.md"));
    const linked = await stat(join(fx.base, ".capvault-versions", first.blob));
    expect([live.ino, live.nlink, linked.isFile()]).toEqual([linked.ino, 2, true]);

    const second = keep("notes/a.md", "second!");
    expect(expectOk(await second.written)).toMatchObject({ created: false, kept: true });
    expect(await readFile(join(fx.base, "r/notes/a.md"), "utf8")).toBe("second!");
    const old = expectOk(await fx.storage.readVersion(first.blob));
    expect([old.size, await text(old.body)]).toEqual([5, "first"]);
    // Deleting the live file leaves its version.
    expectOk(await fx.storage.remove(fileAt(ROOT, "notes/a.md")));
    expect(await text(expectOk(await fx.storage.readVersion(second.blob)).body)).toBe("second!");

    expectOk(await fx.storage.dropVersion(first.blob));
    expectCode(await fx.storage.readVersion(first.blob), "not_found");
    expectOk(await fx.storage.dropVersion(first.blob)); // nothing there: still fine
    expect(await versions()).toEqual([second.blob]);
    // The first inode is gone with its last link, and its sidecar with it; the second is held by its version.
    expect(await readdir(join(fx.base, ".capvault-meta"))).toHaveLength(1);
  });

  it("a link that cannot be made keeps no version and fails no write", async () => {
    // A name already taken in the versions folder: link() fails with EEXIST, as it would with EXDEV.
    const taken = newBlobName();
    await writeFile(join(fx.base, ".capvault-versions", taken), "someone else's");
    const written = fx.storage.write(fileAt(ROOT, "w.txt"), bodyOf("mine"), {
      length: 4,
      contentType: "text/plain",
      keepAs: taken,
    });
    expect(expectOk(await written)).toMatchObject({ created: true, kept: false });
    expect(await readFile(join(fx.base, "r/w.txt"), "utf8")).toBe("mine");
    expect(await readFile(join(fx.base, ".capvault-versions", taken), "utf8")).toBe("someone else's");
  });

  it("a refused or short write keeps no version", async () => {
    expectOk(await keep("f.txt", "one").written);
    const before = (await versions()).sort();
    const refused = keep("f.txt", "two", { ifNoneMatch: "*" });
    expectCode(await refused.written, "precondition_failed");
    const short = fx.storage.write(fileAt(ROOT, "g.txt"), bodyOf("abc"), {
      length: 10,
      contentType: "text/plain",
      keepAs: newBlobName(),
    });
    expectCode(await short, "bad_request");
    expect((await versions()).sort()).toEqual(before);
  });

  it("the versions folder is never listed, named or reached by a blob name that is not one", async () => {
    const whole: Root = [""];
    expectOk(await keep("x.txt", "x").written);
    const page = expectOk(await fx.storage.list(dirAt(whole, ""), { after: null, limit: 100 }));
    expect(page.entries.map((e) => e.name)).toEqual(["r"]);
    // The host refuses a call whose blob is not 32 hex digits, before touching the folder.
    for (const blob of ["../r/x.txt", "..", "", "A".repeat(32), `${newBlobName()}/x`]) {
      const response = await fx.host.fetch(
        new Request("http://capvault-disk/readVersion", {
          method: "POST",
          headers: { "capvault-disk-secret": fx.secret },
          body: encodeCallHead({ op: "readVersion", root: [], blob }),
        }),
      );
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe("bad_request");
    }
  });
});
