/**
 * Shared setup for the disk backend's Node tests: a real base folder and a
 * real "outside" folder under os.tmpdir(), a disk host over the base, and a
 * DiskStorage whose DISK binding is that host, so every call crosses the same
 * wire protocol as under Miniflare.
 */

import { createHash } from "node:crypto";
import { lstat, mkdir, mkdtemp, readdir, readFile, readlink, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect } from "vitest";
import { createDiskHost, type DiskHost, type DiskHostOptions } from "../../disk-host/index.ts";
import { parseRelPath, type RelPath } from "../../shared/rel-path.ts";
import type { Result } from "../../shared/result.ts";
import type { WriteResult } from "../../shared/wire-types.ts";
import { DiskStorage } from "../../storage-adapters/disk-storage.ts";
import type { Root, StorageWriteOptions } from "../../storage-adapters/storage-adapter.ts";
import { checked, rootAt } from "../checked-paths.ts";

export const SECRET = "TOP-SECRET-BYTES-FROM-OUTSIDE";

export interface DiskFixture {
  /** The temp folder holding everything; no response may ever contain it. */
  top: string;
  base: string;
  outside: string;
  host: DiskHost;
  storage: DiskStorage;
  /** The secret every call to `host` must carry. */
  secret: string;
  /** Every JSON body and header the host answered with, for the no-host-path check. */
  answers: string[];
  close(): Promise<void>;
}

/** A fresh base folder and an outside folder holding `secret.txt` and `dir/inner.txt`. */
export async function makeFixture(options: Partial<DiskHostOptions> = {}): Promise<DiskFixture> {
  const top = await mkdtemp(join(tmpdir(), "capvault-disk-"));
  const base = join(top, "base");
  const outside = join(top, "outside");
  await mkdir(join(outside, "dir"), { recursive: true });
  await writeFile(join(outside, "secret.txt"), SECRET);
  await writeFile(join(outside, "dir", "inner.txt"), SECRET);
  const secret = "fixture-secret-0123456789";
  const host = createDiskHost({ baseDir: base, secret, ...options });
  const answers: string[] = [];
  const storage = new DiskStorage(
    {
      async fetch(request) {
        const response = await host.fetch(request);
        answers.push(JSON.stringify([...response.headers]));
        if (response.headers.get("content-type") === "application/json") answers.push(await response.clone().text());
        return response;
      },
    },
    secret,
  );
  return {
    top,
    base,
    outside,
    host,
    storage,
    secret,
    answers,
    async close() {
      const leaked: string[] = [];
      try {
        await host.close();
        // Every descriptor the host opened under the test folder is closed by now.
        for (const fd of await readdir("/proc/self/fd")) {
          const target = await readlink(`/proc/self/fd/${fd}`).catch(() => "");
          if (target.startsWith(top)) leaked.push(target.slice(top.length));
        }
      } finally {
        await rm(top, { recursive: true, force: true });
      }
      expect(leaked).toEqual([]);
    },
  };
}

/**
 * A fresh fixture for each test of the calling file, with `root` made in it:
 * filled in before each test, closed after it (`checked`: by
 * {@link closeChecked}, which also fails the test if an answer named a host path).
 *
 * @example
 * const fx = fixtureEach(["r/"], { checked: true });
 * it("reads", async () => { expectOk(await fx.storage.stat(entryAt(["r/"], ""))); });
 */
export function fixtureEach(root: Root, options: { checked?: boolean } = {}): DiskFixture {
  const fx = {} as DiskFixture;
  beforeEach(async () => {
    Object.assign(fx, await makeFixture());
    expectOk(await fx.storage.prepareRoot(rootAt(root), { create: true }));
  });
  afterEach(() => (options.checked ? closeChecked(fx) : fx.close()));
  return fx;
}

/** Closes `fx` once no answer of the host, success or failure, has named a host path. */
export async function closeChecked(fx: DiskFixture): Promise<void> {
  try {
    for (const answer of fx.answers) expect(answer).not.toContain(fx.top);
  } finally {
    await fx.close();
  }
}

export function rel(text: string): RelPath {
  const parsed = parseRelPath(text);
  if (!parsed.ok) throw new Error(`test path refused: ${text}`);
  return parsed.value;
}

export function md5(data: string | Uint8Array): string {
  return createHash("md5").update(data).digest("hex");
}

export function sha256(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/** A body delivered in small chunks, so the host really streams it. */
export function bodyOf(data: string | Uint8Array, chunkSize = 7): ReadableStream<Uint8Array> {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  let offset = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(offset, offset + chunkSize));
      offset += chunkSize;
    },
  });
}

export async function put(
  storage: DiskStorage,
  root: Root,
  path: string,
  content: string,
  options: Partial<StorageWriteOptions> = {},
): Promise<Result<WriteResult>> {
  const length = new TextEncoder().encode(content).length;
  // Through the chokepoint's path step, so a path the vault refuses is refused here too.
  const at = checked(root, path, "file");
  if (!at.ok) return at;
  return storage.write(at.value, bodyOf(content), { length, contentType: "text/plain", ...options });
}

/** The whole file as text, or the failure. */
export async function getText(storage: DiskStorage, root: Root, path: string): Promise<Result<string>> {
  const at = checked(root, path, "file");
  if (!at.ok) return at;
  const read = await storage.read(at.value, {});
  if (!read.ok) return read;
  if (read.value.status !== "body") throw new Error(`unexpected ${read.value.status}`);
  return { ok: true, value: await new Response(read.value.body).text() };
}

export function expectCode(result: Result<unknown>, code: string): void {
  expect(result.ok ? "ok" : result.error.code).toBe(code);
}

export function expectOk<T>(result: Result<T>): T {
  if (!result.ok) throw new Error(`expected ok, got ${result.error.code}: ${result.error.message}`);
  return result.value;
}

/**
 * Watches a tree that the vault must never touch. Any later read of a file
 * moves its atime (set here far in the past, which a relatime mount updates
 * on the next read); any write, create, delete or chmod changes sizes, mtimes,
 * modes or the entry list. Links are never followed.
 */
export async function watchTree(dir: string): Promise<{ assertUntouched(): Promise<void> }> {
  const contents = await treeContents(dir);
  await ageFileAtimes(dir);
  const stats = await treeStats(dir);
  return {
    async assertUntouched() {
      // Stats first: reading contents to compare them moves atimes.
      expect(await treeStats(dir)).toEqual(stats);
      expect(await treeContents(dir)).toEqual(contents);
    },
  };
}

/** lstat only, so taking it reads no file. Folder atimes are left out: listing them here moves those. */
async function treeStats(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  await visitTree(dir, ".", async (path, name, st) => {
    if (st.isSymbolicLink()) out[name] = `link ${await readlink(path)}`;
    else if (st.isDirectory()) out[name] = `dir mode=${st.mode} mtime=${st.mtimeNs}`;
    else out[name] = `file mode=${st.mode} size=${st.size} mtime=${st.mtimeNs} atime=${st.atimeNs}`;
  });
  return out;
}

async function treeContents(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  await visitTree(dir, ".", async (path, name, st) => {
    if (st.isFile()) out[name] = md5(await readFile(path));
  });
  return out;
}

async function ageFileAtimes(dir: string): Promise<void> {
  await visitTree(dir, ".", async (path, _name, st) => {
    if (st.isFile()) await utimes(path, new Date(86_400_000), new Date(Number(st.mtimeNs / 1_000_000n)));
  });
}

type Visit = (path: string, name: string, st: import("node:fs").BigIntStats) => Promise<void>;

async function visitTree(path: string, name: string, visit: Visit): Promise<void> {
  const st = await lstat(path, { bigint: true });
  await visit(path, name, st);
  if (st.isDirectory())
    for (const child of (await readdir(path)).sort()) await visitTree(join(path, child), `${name}/${child}`, visit);
}

/** True when this filesystem records reads in atime (relatime/strictatime), so the no-read checks mean something. */
export async function atimeRecordsReads(dir: string): Promise<boolean> {
  const probe = join(dir, "atime-probe");
  await writeFile(probe, "probe");
  await utimes(probe, new Date(86_400_000), new Date());
  await readFile(probe);
  const moved = (await lstat(probe)).atimeMs > 86_400_000 + 1000;
  await rm(probe);
  return moved;
}

/** Every name under `dir` (temps and empty folders included), as paths relative to it, depth first. */
export async function listTree(dir: string, prefix = ""): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    out.push(prefix + entry.name);
    if (entry.isDirectory()) out.push(...(await listTree(join(dir, entry.name), `${prefix}${entry.name}/`)));
  }
  return out;
}
