/**
 * Slow uploads against the real disk host. A write holds a temp file and the
 * folders on its way open while its body arrives; a client that stalls (or
 * trickles) must not hold them for ever, and no more than a bounded number
 * of writes may hold them at once. A timed-out write stores nothing and
 * frees every descriptor it took.
 */

import { readdir, readlink } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { DiskHostOptions } from "../../disk-host/index.ts";
import { DiskStorage } from "../../storage-adapters/disk-storage.ts";
import type { Root } from "../../storage-adapters/storage-adapter.ts";
import { TOO_MANY_UPLOADS, TOO_SLOW, UPLOAD_LIMITS } from "../../storage-adapters/upload-limits.ts";
import { fileAt, rootAt } from "../checked-paths.ts";
import { type DiskFixture, expectOk, listTree, makeFixture, put } from "./disk-fixture.ts";

const ROOT: Root = ["r/"];
let fx: DiskFixture;

afterEach(async () => {
  await fx.close();
});

async function setup(uploads: DiskHostOptions["uploads"]): Promise<void> {
  fx = await makeFixture({ uploads });
  expectOk(await fx.storage.prepareRoot(rootAt(ROOT), { create: true }));
}

/** This process's open descriptors: all of them, and those on files under the test folder. */
async function descriptors(): Promise<{ all: number; mine: number }> {
  let mine = 0;
  const fds = await readdir("/proc/self/fd");
  for (const fd of fds) if ((await readlink(`/proc/self/fd/${fd}`).catch(() => "")).startsWith(fx.top)) mine++;
  return { all: fds.length, mine };
}

/**
 * Every descriptor the writes took is given back: none left under the test folder, and no more open in all.
 * Not `all` equal: this worker process also holds other files' keep-alive sockets, which the vault may close
 * meanwhile (it ends an idle connection after 5 s), so the count may fall while the test runs.
 */
async function expectGivenBack(before: { all: number; mine: number }): Promise<void> {
  const after = await descriptors();
  expect(after.mine).toBe(before.mine);
  expect(after.all).toBeLessThanOrEqual(before.all);
}

/** Every name under the cap's folder. */
const tree = () => listTree(join(fx.base, "r"));

/** A body that sends `first`, then nothing, until `fail()` errors it. */
function stalledBody(first: string): { body: ReadableStream<Uint8Array>; fail(): void } {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let sent = false;
  const body = new ReadableStream<Uint8Array>({
    start: (c) => {
      controller = c;
    },
    pull: (c) => {
      if (!sent) c.enqueue(new TextEncoder().encode(first));
      sent = true;
      return new Promise<void>(() => undefined);
    },
  });
  return { body, fail: () => controller.error(new Error("client gone")) };
}

/** One byte every 20 ms: never idle for long, but far too slow overall. */
function tricklingBody(length: number): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream<Uint8Array>({
    async pull(c) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      if (sent++ < length) c.enqueue(new Uint8Array([120]));
      else c.close();
    },
  });
}

const code = (r: { ok: boolean; error?: { code: string; message: string } }) =>
  r.ok ? "ok" : `${r.error!.code}: ${r.error!.message}`;
const write = (path: string, body: ReadableStream<Uint8Array>, length: number) =>
  fx.storage.write(fileAt(ROOT, path), body, { length, contentType: "text/plain" });

describe("a stalled upload", () => {
  it("times out once idle, stores nothing and gives back every descriptor (30 at once)", async () => {
    await setup({ idleMs: 4_000, maxConcurrent: 100 });
    const before = await descriptors();
    const writes = Array.from({ length: 30 }, (_, i) => write(`slow/${i}/f.txt`, stalledBody("x").body, 1000));
    let settled = false;
    const all = Promise.all(writes).finally(() => (settled = true));
    let peak = before.mine;
    while (!settled) {
      peak = Math.max(peak, (await descriptors()).mine);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    const results = await all;
    expect(results.map(code)).toEqual(Array(30).fill(`bad_request: ${TOO_SLOW}`));
    // While they stalled, each held at least its temp file.
    expect(peak - before.mine).toBeGreaterThanOrEqual(30);
    await expectGivenBack(before);
    expect(await tree()).toEqual([]);
  });

  it("times out at its deadline even when bytes keep trickling in", async () => {
    await setup({ idleMs: 10_000, minTotalMs: 300, minBytesPerSecond: 1_000_000 });
    const before = await descriptors();
    expect(code(await write("trickle.txt", tricklingBody(1000), 1000))).toBe(`bad_request: ${TOO_SLOW}`);
    await expectGivenBack(before);
    expect(await tree()).toEqual([]);
  });
});

describe("the worker's side of the wire", () => {
  it("times a stalled body out by its own, tighter limits, and says why", async () => {
    await setup({ idleMs: 600_000 });
    const worker = new DiskStorage(fx.host, fx.secret, { ...UPLOAD_LIMITS, idleMs: 300 });
    const result = await worker.write(fileAt(ROOT, "stalled.txt"), stalledBody("x").body, {
      length: 10,
      contentType: "text/plain",
    });
    expect(code(result)).toBe(`bad_request: ${TOO_SLOW}`);
    expect(await tree()).toEqual([]);
  });
});

describe("concurrent uploads", () => {
  it("past the bound are refused at once with unavailable, and taken again once a slot frees", async () => {
    await setup({ idleMs: 600_000, maxConcurrent: 3 });
    const before = await descriptors();
    const stalled = [stalledBody("x"), stalledBody("x"), stalledBody("x")];
    const writes = stalled.map((s, i) => write(`held/${i}`, s.body, 10));
    // Wait until all three hold their temp file (the idle bound is far away).
    while ((await tree()).filter((name) => name.includes(".capvault-tmp-")).length < 3)
      await new Promise((r) => setTimeout(r, 10));
    expect(code(await put(fx.storage, ROOT, "refused.txt", "hello"))).toBe(`unavailable: ${TOO_MANY_UPLOADS}`);
    for (const s of stalled) s.fail();
    expect((await Promise.all(writes)).map((r) => r.ok)).toEqual([false, false, false]);
    expect(await tree()).toEqual([]);
    expect(expectOk(await put(fx.storage, ROOT, "taken.txt", "hello")).size).toBe(5);
    expect(await tree()).toEqual(["taken.txt"]);
    expect((await descriptors()).mine).toBe(before.mine);
  });
});
