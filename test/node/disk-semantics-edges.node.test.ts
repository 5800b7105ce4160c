/**
 * The disk backend against the StorageAdapter contract, on real folders, part
 * two (part one: disk-semantics.node.test.ts): conflicts and not_found,
 * listing, stale temps, configuration and the wire protocol.
 */

import { execFileSync } from "node:child_process";
import { mkdir, readdir, stat, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { encodeCallHead } from "../../storage-adapters/disk-protocol.ts";
import type { Root, StorageListPage } from "../../storage-adapters/storage-adapter.ts";
import { dirAt, entryAt, fileAt, rootAt } from "../checked-paths.ts";
import {
  closeChecked,
  type DiskFixture,
  expectCode,
  expectOk,
  getText,
  makeFixture,
  md5,
  put,
} from "./disk-fixture.ts";

const ROOT: Root = ["r/"];
let fx: DiskFixture;

beforeEach(async () => {
  fx = await makeFixture();
  expectOk(await fx.storage.prepareRoot(rootAt(ROOT), { create: true }));
});

afterEach(() => closeChecked(fx));

const names = async (path = "", root: Root = ROOT) =>
  expectOk(await fx.storage.list(dirAt(root, path), { after: null, limit: 1000 })).entries.map(
    (e) => `${e.name}:${e.type}`,
  );

describe("conflicts and not_found, as the interface rules", () => {
  beforeEach(async () => {
    expectOk(await put(fx.storage, ROOT, "file.txt", "f"));
    expectOk(await put(fx.storage, ROOT, "dir/inner.txt", "i"));
  });

  it("read, write, remove, stat and list", async () => {
    expectCode(await fx.storage.read(fileAt(ROOT, "dir"), {}), "conflict");
    expectCode(await fx.storage.read(fileAt(ROOT, "missing"), {}), "not_found");
    expectCode(await fx.storage.read(fileAt(ROOT, "file.txt/x"), {}), "not_found");
    expect(await put(fx.storage, ROOT, "file.txt/x", "x")).toEqual({
      ok: false,
      error: { code: "conflict", message: "a parent of that path is a file" },
    });
    expect(await put(fx.storage, ROOT, "dir", "x")).toEqual({
      ok: false,
      error: { code: "conflict", message: "that path is a directory" },
    });
    expectCode(await fx.storage.remove(fileAt(ROOT, "dir")), "conflict");
    expectCode(await fx.storage.remove(fileAt(ROOT, "missing")), "not_found");
    expectCode(await fx.storage.remove(fileAt(ROOT, "file.txt/x")), "not_found");
    expect(expectOk(await fx.storage.stat(entryAt(ROOT, "dir")))).toEqual({ type: "dir" });
    expectCode(await fx.storage.stat(entryAt(ROOT, "missing")), "not_found");
    expectCode(await fx.storage.stat(entryAt(ROOT, "file.txt/x")), "not_found");
    expect(await fx.storage.list(dirAt(ROOT, "file.txt"), { after: null, limit: 5 })).toEqual({
      ok: false,
      error: { code: "conflict", message: "that path is a file" },
    });
    expectCode(await fx.storage.list(dirAt(ROOT, "missing"), { after: null, limit: 5 }), "not_found");
    // Like R2, a later page of a folder that is gone is empty rather than an error.
    expect(expectOk(await fx.storage.list(dirAt(ROOT, "missing"), { after: "a", limit: 5 }))).toEqual({
      entries: [],
      next: null,
    });
  });

  it("move: files only, atomic, conflict on an existing destination unless overwrite", async () => {
    expectOk(await fx.storage.move(fileAt(ROOT, "file.txt"), fileAt(ROOT, "moved/deep/f.txt"), false));
    expect(expectOk(await getText(fx.storage, ROOT, "moved/deep/f.txt"))).toBe("f");
    expectCode(await fx.storage.stat(entryAt(ROOT, "file.txt")), "not_found");
    expect(expectOk(await fx.storage.stat(entryAt(ROOT, "moved/deep/f.txt")))).toMatchObject({
      contentType: "text/plain",
      etag: md5("f"),
    });

    expectOk(await put(fx.storage, ROOT, "other.txt", "o"));
    expect(await fx.storage.move(fileAt(ROOT, "other.txt"), fileAt(ROOT, "moved/deep/f.txt"), false)).toEqual({
      ok: false,
      error: { code: "conflict", message: "the destination exists" },
    });
    expect(expectOk(await getText(fx.storage, ROOT, "other.txt"))).toBe("o");
    expectOk(await fx.storage.move(fileAt(ROOT, "other.txt"), fileAt(ROOT, "moved/deep/f.txt"), true));
    expect(expectOk(await getText(fx.storage, ROOT, "moved/deep/f.txt"))).toBe("o");

    expect(await fx.storage.move(fileAt(ROOT, "dir"), fileAt(ROOT, "dir2"), false)).toEqual({
      ok: false,
      error: { code: "conflict", message: "cannot move a directory" },
    });
    expectCode(await fx.storage.move(fileAt(ROOT, "moved/deep/f.txt"), fileAt(ROOT, "dir"), true), "conflict");
    expectCode(
      await fx.storage.move(fileAt(ROOT, "moved/deep/f.txt"), fileAt(ROOT, "dir/inner.txt/x"), true),
      "conflict",
    );
    expectCode(await fx.storage.move(fileAt(ROOT, "missing"), fileAt(ROOT, "x"), true), "not_found");
    expectOk(await fx.storage.move(fileAt(ROOT, "dir/inner.txt"), fileAt(ROOT, "dir/inner.txt"), true));
    expectCode(await fx.storage.move(fileAt(ROOT, "dir/inner.txt"), fileAt(ROOT, "dir/inner.txt"), false), "conflict");
    expect(expectOk(await getText(fx.storage, ROOT, "dir/inner.txt"))).toBe("i");
    // The source's emptied folder stays (marked) until removed; the failed destinations left none.
    expectOk(await fx.storage.move(fileAt(ROOT, "moved/deep/f.txt"), fileAt(ROOT, "top.txt"), false));
    expect((await readdir(join(fx.base, "r"))).sort()).toEqual(["dir", "moved", "top.txt"]);
    expect(await readdir(join(fx.base, "r/dir"))).toEqual(["inner.txt"]);
    expect(await names("moved/deep")).toEqual([]);
    expectOk(await fx.storage.removeDir(rootAt(["r/", "moved/deep/"])));
    expectOk(await fx.storage.removeDir(rootAt(["r/", "moved/"])));
    expect((await readdir(join(fx.base, "r"))).sort()).toEqual(["dir", "top.txt"]);
  });

  it("prepareRoot: creates admin roots 0700, checks the others, refuses files", async () => {
    expectOk(await fx.storage.prepareRoot(rootAt(["made/", "deeper/"]), { create: true }));
    expect((await stat(join(fx.base, "made/deeper"))).mode & 0o777).toBe(0o700);
    expectOk(await fx.storage.prepareRoot(rootAt(["r/", "dir/"]), { create: false }));
    expect(await fx.storage.prepareRoot(rootAt(["r/", "file.txt/"]), { create: false })).toEqual({
      ok: false,
      error: { code: "conflict", message: "that path is a file" },
    });
    expectCode(await fx.storage.prepareRoot(rootAt(["r/file.txt/"]), { create: true }), "conflict");
  });
});

describe("listing", () => {
  it("sorts by UTF-8 bytes and pages with `after`/`next`", async () => {
    // UTF-16 order would put the emoji (a surrogate pair) before U+FF5E; UTF-8 puts it after.
    const fileNames = [
      "b",
      "B",
      "a",
      "é",
      "\uff5e",
      "😀",
      "a b",
      "a-b",
      ...Array.from({ length: 20 }, (_, i) => `n${String(i).padStart(2, "0")}`),
    ];
    for (const name of fileNames) expectOk(await put(fx.storage, ROOT, name, name));
    for (const dir of ["d1", "Z"]) expectOk(await put(fx.storage, ROOT, `${dir}/x`, "x"));
    const all = expectOk(await fx.storage.list(dirAt(ROOT, ""), { after: null, limit: 1000 }));
    const expected = [...fileNames, "d1", "Z"].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
    expect(all.entries.map((e) => e.name)).toEqual(expected);
    expect(all.next).toBeNull();
    expect(all.entries.find((e) => e.name === "😀")).toMatchObject({ type: "file", size: 4, etag: md5("😀") });
    expect(all.entries.find((e) => e.name === "Z")).toEqual({ name: "Z", type: "dir" });

    const paged: string[] = [];
    let after: string | null = null;
    for (let pages = 0; pages < 10; pages++) {
      const page: StorageListPage = expectOk(await fx.storage.list(dirAt(ROOT, ""), { after, limit: 7 }));
      paged.push(...page.entries.map((e) => e.name));
      if (page.next === null) break;
      expect(page.next).toBe(page.entries[page.entries.length - 1]!.name);
      after = page.next;
    }
    expect(paged).toEqual(expected);
    // An exact fit: the last full page says there is no more.
    expect(
      expectOk(await fx.storage.list(dirAt(ROOT, ""), { after: expected[expected.length - 4]!, limit: 3 })).next,
    ).toBeNull();
    // A cursor naming nothing continues after where it would sort.
    expect(
      expectOk(await fx.storage.list(dirAt(ROOT, ""), { after: "n05x", limit: 2 })).entries.map((e) => e.name),
    ).toEqual(["n06", "n07"]);
  });

  it("never lists temps, sidecars, FIFOs or names a cap could not address", async () => {
    expectOk(await put(fx.storage, ROOT, "visible.txt", "v"));
    await writeFile(join(fx.base, "r/.capvault-tmp-abcdef"), "partial");
    await writeFile(join(fx.base, "r/~tilde"), "x");
    await writeFile(join(fx.base, "r/line\nbreak"), "x");
    execFileSync("mkfifo", [join(fx.base, "r/fifo")]);
    expect(await names()).toEqual(["visible.txt:file"]);
    expect(await names("", [""])).toEqual(["r:dir"]);
    // A FIFO is never opened for reading (that would block the host).
    expectCode(await fx.storage.read(fileAt(ROOT, "fifo"), {}), "not_found");
    expectCode(await fx.storage.stat(entryAt(ROOT, "fifo")), "not_found");
  });
});

describe("stale temps", () => {
  it("cleanStaleTemps removes crash leftovers and the folders that only held them, nothing else", async () => {
    expectOk(await put(fx.storage, ROOT, "keep/me.txt", "kept", { contentType: "text/x-kept" }));
    await writeFile(join(fx.base, "r/keep/.capvault-tmp-1111"), "stale");
    await mkdir(join(fx.base, "r/crashed/deeper"), { recursive: true });
    await writeFile(join(fx.base, "r/crashed/deeper/.capvault-tmp-2222"), "stale");
    await writeFile(join(fx.base, ".capvault-tmp-3333"), "stale");
    await writeFile(join(fx.base, ".capvault-meta/.capvault-tmp-4444"), "stale");
    // A crash's leftover predates the start; the sweep keeps sidecar-folder files written since it began
    // (a write in flight), and a file system's clock may stamp one written this millisecond a little ahead.
    const crashed = new Date(Date.now() - 60_000);
    await utimes(join(fx.base, ".capvault-meta/.capvault-tmp-4444"), crashed, crashed);
    await fx.host.cleanStaleTemps();
    expect(await readdir(join(fx.base, "r/keep"))).toEqual(["me.txt"]);
    expect(await readdir(join(fx.base, "r"))).toEqual(["keep"]);
    expect((await readdir(fx.base)).sort()).toEqual([".capvault-format", ".capvault-meta", ".capvault-versions", "r"]);
    expect(expectOk(await fx.storage.stat(entryAt(ROOT, "keep/me.txt")))).toMatchObject({ contentType: "text/x-kept" });
    expect(await readdir(join(fx.base, ".capvault-meta"))).toHaveLength(1);
  });

  it("drops sidecars of files deleted by hand, and spares a write in flight", async () => {
    expectOk(await put(fx.storage, ROOT, "gone.txt", "x"));
    execFileSync("rm", [join(fx.base, "r/gone.txt")]);
    await new Promise((resolve) => setTimeout(resolve, 5)); // the sweep spares sidecars newer than its start
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let sent = false;
    const slow = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (!sent) {
          sent = true;
          return controller.enqueue(new TextEncoder().encode("half"));
        }
        await gate;
        controller.enqueue(new TextEncoder().encode("-done"));
        controller.close();
      },
    });
    const writing = fx.storage.write(fileAt(ROOT, "inflight.txt"), slow, { length: 9, contentType: "text/plain" });
    while (!(await readdir(join(fx.base, "r"))).some((n) => n.startsWith(".capvault-tmp-")))
      await new Promise((r) => setTimeout(r, 2));
    await fx.host.cleanStaleTemps();
    release();
    expect(expectOk(await writing).created).toBe(true);
    expect(expectOk(await getText(fx.storage, ROOT, "inflight.txt"))).toBe("half-done");
    expect(await readdir(join(fx.base, ".capvault-meta"))).toHaveLength(1);
  });
});

describe("configuration and protocol", () => {
  it("uses configured file and folder modes", async () => {
    const custom = await makeFixture({ fileMode: 0o640, dirMode: 0o750 });
    try {
      expectOk(await put(custom.storage, ["c/"], "x/y.txt", "y"));
      expect((await stat(join(custom.base, "c/x"))).mode & 0o777).toBe(0o750);
      expect((await stat(join(custom.base, "c/x/y.txt"))).mode & 0o777).toBe(0o640);
    } finally {
      await custom.close();
    }
  });

  it("answers calls without the right secret with unavailable, touching nothing", async () => {
    await writeFile(join(fx.base, "kept.txt"), "host file");
    const attempts: Record<string, string>[] = [
      {},
      { "capvault-disk-secret": `${fx.secret}x` },
      { "capvault-disk-secret": "" },
    ];
    for (const headers of attempts) {
      const read = await fx.host.fetch(
        new Request("http://disk/read", {
          method: "POST",
          headers,
          body: encodeCallHead({ op: "read", root: [""], path: ["kept.txt"], range: null, ifNoneMatch: null }),
        }),
      );
      const text = await read.text();
      expect(text).not.toContain("host file");
      expect(JSON.parse(text)).toMatchObject({ ok: false, error: { code: "unavailable" } });
    }
  });

  it("answers malformed calls with bad_request, never a throw or a path", async () => {
    const call = (body: BodyInit | null, method = "POST") =>
      fx.host.fetch(
        new Request("http://disk/x", {
          method,
          body,
          duplex: "half",
          headers: { "capvault-disk-secret": fx.secret },
        } as RequestInit),
      );
    for (const response of [
      await call(null, "GET"),
      await call(new Uint8Array([0, 0])),
      await call(new Uint8Array([255, 255, 255, 255, 1])),
      await call(encodeCallHead({ op: "stat", root: ["../"], path: [] })),
      await call(encodeCallHead({ op: "stat", root: ["r/"], path: ["a/b"] })),
      await call(encodeCallHead({ op: "stat", root: ["r/"], path: [".capvault-meta"] })),
      await call(new Blob([new Uint8Array([0, 0, 0, 2]), "{}"]).stream()),
    ]) {
      expect(response.status).toBe(200);
      const result = (await response.json()) as { ok: boolean; error: { code: string } };
      expect(result.ok).toBe(false);
      expect(["bad_request", "invalid_path", "path_escapes"]).toContain(result.error.code);
    }
  });
});
