import { randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FORMAT_FILE_NAME, RELEASE, STATE_FORMAT } from "../shared/state-format.ts";
import { DISK_SECRET_HEADER, type DiskCall, encodeCallHead } from "../storage-adapters/disk-protocol.ts";
import { checkDiskFormat } from "./format-stamp.ts";
import { createDiskHost } from "./index.ts";

const secret = randomBytes(24).toString("base64url");
let dir: string;
let base: string;

beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "capvault-format-"));
  base = path.join(dir, "base");
  await mkdir(base);
});
afterEach(() => rm(dir, { recursive: true, force: true }));

function call(value: DiskCall): Request {
  return new Request(`http://capvault-disk/${value.op}`, {
    method: "POST",
    body: encodeCallHead(value),
    headers: { [DISK_SECRET_HEADER]: secret },
  });
}

/** Every name in the folder, recursively, with file contents: what "touched nothing" compares. */
async function tree(folder: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await readdir(folder, { withFileTypes: true, recursive: true })) {
    const full = path.join(entry.parentPath, entry.name);
    out[path.relative(folder, full)] = entry.isFile()
      ? await readFile(full, "utf8")
      : entry.isSymbolicLink()
        ? "link"
        : "dir";
  }
  return out;
}

describe("the disk backend's format stamp", () => {
  it("a folder without one (format 1, or new) is stamped with this build's format, and served", async () => {
    await writeFile(path.join(base, "old.txt"), "kept");
    expect(checkDiskFormat(base)).toEqual({ ok: true, value: { from: null } });
    expect(JSON.parse(await readFile(path.join(base, FORMAT_FILE_NAME), "utf8"))).toEqual({
      format: STATE_FORMAT,
      release: RELEASE,
    });
    // No temp is left beside it, and a second start finds it current.
    expect((await readdir(base)).sort()).toEqual([FORMAT_FILE_NAME, "old.txt"]);
    expect(checkDiskFormat(base)).toEqual({ ok: true, value: { from: STATE_FORMAT } });
  });

  it("a newer format: every call refused naming both formats, and nothing in the folder touched", async () => {
    await writeFile(path.join(base, FORMAT_FILE_NAME), JSON.stringify({ format: STATE_FORMAT + 1, release: "9.0.0" }));
    await mkdir(path.join(base, "r"));
    await writeFile(path.join(base, "r", "a.txt"), "hello");
    await writeFile(path.join(base, ".capvault-tmp-left-by-a-newer-build"), "x");
    const before = await tree(base);
    const host = createDiskHost({ baseDir: base, secret });
    await host.cleanStaleTemps();
    const answer = await (await host.fetch(call({ op: "stat", root: ["r/"], path: ["a.txt"] }))).text();
    expect(answer).toContain(`this vault's state is format ${STATE_FORMAT + 1}, written by a newer capvault`);
    expect(answer).toContain(`reads formats up to ${STATE_FORMAT}`);
    await host.fetch(call({ op: "remove", root: ["r/"], path: ["a.txt"] } as DiskCall));
    await host.close();
    expect(await tree(base)).toEqual(before);
  });

  it("a stamp planted as a link, or one it cannot read, is refused and its target left alone", async () => {
    const outside = path.join(dir, "outside.json");
    await writeFile(outside, JSON.stringify({ format: 1 }));
    await symlink(outside, path.join(base, FORMAT_FILE_NAME));
    expect(checkDiskFormat(base)).toMatchObject({ ok: false, error: { code: "unavailable" } });
    expect(await readFile(outside, "utf8")).toBe(JSON.stringify({ format: 1 }));
    await rm(path.join(base, FORMAT_FILE_NAME));
    for (const garbage of ["", "{", '{"format":"2"}', '{"format":-1}', "null"]) {
      await writeFile(path.join(base, FORMAT_FILE_NAME), garbage);
      expect(checkDiskFormat(base)).toMatchObject({
        ok: false,
        error: { message: expect.stringContaining("a format stamp this build cannot read") },
      });
      expect(await readFile(path.join(base, FORMAT_FILE_NAME), "utf8")).toBe(garbage);
    }
  });
});
