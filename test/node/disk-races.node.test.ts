/**
 * Races against an outsider with a shell in the cap's folder. A worker thread
 * (its own core, synchronous syscalls) swaps regular files and folders for
 * links to an outside secret and back, while the adapter reads, lists and
 * writes through the same names. Each race runs for at least ~2 s and until
 * it has seen what proves it raced (a loaded machine makes it longer, never
 * makes it fail), within a hard bound; what is asserted is what was observed,
 * never how long anything took.
 */

import { readFileSync } from "node:fs";
import { mkdir, readdir, readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Result } from "../../shared/result.ts";
import type { Root } from "../../storage-adapters/storage-adapter.ts";
import { dirAt, entryAt, fileAt } from "../checked-paths.ts";
import {
  bodyOf,
  closeChecked,
  type DiskFixture,
  expectOk,
  makeFixture,
  md5,
  put,
  SECRET,
  watchTree,
} from "./disk-fixture.ts";

const ROOT: Root = ["r/"];
const RACE_MS = 2000;
/**
 * A race whose proof of racing has not shown by then stops, and its assertion
 * fails. Far beyond need: the swapper keeps a link in place about half its
 * cycle, so on a quiet machine the proof shows within the first milliseconds.
 */
const RACE_LIMIT_MS = 40_000;
const SAFE = "safe content, inside the root";
let fx: DiskFixture;

beforeEach(async () => {
  fx = await makeFixture();
});

afterEach(() => closeChecked(fx));

/** One step of the outsider's loop, run with synchronous fs calls. */
type SwapStep = ["rename", string, string] | ["symlink", string, string] | ["write", string, string];

/**
 * Runs `steps` in a tight loop on another thread until `stop()`; errors of
 * single steps (a name briefly missing) are ignored, as an attacker would.
 */
function startSwapper(steps: SwapStep[]): { stop(): Promise<number> } {
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(
    `
    const { workerData, parentPort } = require("node:worker_threads");
    const fs = require("node:fs");
    const { steps, flag, deadline } = workerData;
    let cycles = 0;
    while (Atomics.load(flag, 0) === 0 && Date.now() < deadline) {
      for (const [op, a, b] of steps) {
        try {
          if (op === "rename") fs.renameSync(a, b);
          else if (op === "symlink") fs.symlinkSync(a, b);
          else fs.writeFileSync(a, b);
        } catch {}
      }
      cycles++;
    }
    parentPort.postMessage(cycles);
    `,
    // A hard deadline so a failing test can never leave the thread spinning.
    { eval: true, workerData: { steps, flag, deadline: Date.now() + RACE_LIMIT_MS + RACE_MS } },
  );
  const cycles = new Promise<number>((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
  });
  return {
    async stop() {
      Atomics.store(flag, 0, 1);
      const n = await cycles;
      await worker.terminate();
      return n;
    },
  };
}

/**
 * Runs `body` in `lanes` concurrent loops for at least RACE_MS and until
 * `raced()` holds, or RACE_LIMIT_MS has passed. A fixed time alone let a
 * starved machine end a race before any request met a link.
 */
async function raceFor(
  lanes: number,
  raced: () => boolean,
  body: (lane: number, i: number) => Promise<void>,
): Promise<void> {
  const started = Date.now();
  const going = () => Date.now() - started < RACE_MS || (!raced() && Date.now() - started < RACE_LIMIT_MS);
  await Promise.all(
    Array.from({ length: lanes }, async (_, lane) => {
      for (let i = 0; going(); i++) await body(lane, i);
    }),
  );
}

const code = (result: Result<unknown>) => (result.ok ? "ok" : result.error.code);

describe("a link swapped in while requests run", () => {
  it("never lets a read, stat or listing see outside bytes, names or sizes", async () => {
    const r = join(fx.base, "r");
    await mkdir(join(r, "vdir"), { recursive: true });
    await writeFile(join(r, "victim.txt"), SAFE);
    await writeFile(join(r, "vdir", "f.txt"), SAFE);
    await mkdir(join(fx.outside, "racedir"));
    await writeFile(join(fx.outside, "racedir", "f.txt"), SECRET);
    await writeFile(join(fx.outside, "racedir", "only-outside.txt"), SECRET);
    await symlink(join(fx.outside, "racedir"), join(r, "vdir-link"));
    const watch = await watchTree(fx.outside);

    const swapper = startSwapper([
      // A file atomically replaced by a link (a prepared link renamed over it), then back.
      ["symlink", join(fx.outside, "secret.txt"), join(r, "tmp-link")],
      ["rename", join(r, "tmp-link"), join(r, "victim.txt")],
      ["write", join(r, "tmp-file"), SAFE],
      ["rename", join(r, "tmp-file"), join(r, "victim.txt")],
      // A folder replaced by a link to an outside folder, then back.
      ["rename", join(r, "vdir"), join(r, "vdir-real")],
      ["rename", join(r, "vdir-link"), join(r, "vdir")],
      ["rename", join(r, "vdir"), join(r, "vdir-link")],
      ["rename", join(r, "vdir-real"), join(r, "vdir")],
    ]);
    const seen: Record<string, number> = {};
    const note = (what: string) => (seen[what] = (seen[what] ?? 0) + 1);
    const raced = () => (seen["read ok"] ?? 0) > 0 && (seen["read outside_root"] ?? 0) > 0;
    try {
      await raceFor(4, raced, async (lane) => {
        for (const path of ["victim.txt", "vdir/f.txt"]) {
          const read = await fx.storage.read(fileAt(ROOT, path), lane % 2 ? { range: "bytes=0-99" } : {});
          note(`read ${code(read)}`);
          if (read.ok && read.value.status === "body") {
            const text = await new Response(read.value.body).text();
            expect(text).not.toContain(SECRET);
            expect(text).toBe(SAFE);
            expect(read.value.meta.size).toBe(SAFE.length);
          }
          const stat = await fx.storage.stat(entryAt(ROOT, path));
          note(`stat ${code(stat)}`);
          if (stat.ok && stat.value.type === "file") expect(stat.value.etag).toBe(md5(SAFE));
        }
        const listed = await fx.storage.list(dirAt(ROOT, "vdir"), { after: null, limit: 10 });
        note(`list ${code(listed)}`);
        if (listed.ok) {
          expect(listed.value.entries.map((e) => e.name)).not.toContain("only-outside.txt");
          for (const entry of listed.value.entries) if (entry.type === "file") expect(entry.size).toBe(SAFE.length);
        }
      });
    } finally {
      note(`swap cycles ${await swapper.stop()}`);
    }
    // The race really happened: reads got through, and some met the link.
    expect(seen["read ok"]).toBeGreaterThan(0);
    expect(seen["read outside_root"]).toBeGreaterThan(0);
    for (const outcome of Object.keys(seen).filter((k) => /^(read|stat|list) /.test(k))) {
      expect(["ok", "outside_root", "not_found", "conflict"]).toContain(outcome.split(" ")[1]);
    }
    await watch.assertUntouched();
  });

  it("never lets a write, create, delete or move land outside", async () => {
    const r = join(fx.base, "r");
    await mkdir(join(r, "wdir"), { recursive: true });
    await writeFile(join(r, "wdir", "keep.txt"), SAFE);
    await writeFile(join(r, "target.txt"), SAFE);
    await mkdir(join(fx.outside, "racedir"));
    await writeFile(join(fx.outside, "racedir", "keep.txt"), SECRET);
    await symlink("../../outside/racedir", join(r, "wdir-link"));
    const watch = await watchTree(fx.outside);

    const swapper = startSwapper([
      ["symlink", join(fx.outside, "secret.txt"), join(r, "tmp-link")],
      ["rename", join(r, "tmp-link"), join(r, "target.txt")],
      ["write", join(r, "tmp-file"), SAFE],
      ["rename", join(r, "tmp-file"), join(r, "target.txt")],
      ["rename", join(r, "wdir"), join(r, "wdir-real")],
      ["rename", join(r, "wdir-link"), join(r, "wdir")],
      ["rename", join(r, "wdir"), join(r, "wdir-link")],
      ["rename", join(r, "wdir-real"), join(r, "wdir")],
    ]);
    const seen: Record<string, number> = {};
    const note = (what: string) => (seen[what] = (seen[what] ?? 0) + 1);
    const total = (outcome: string) =>
      Object.entries(seen).reduce((n, [k, v]) => (k.endsWith(` ${outcome}`) ? n + v : n), 0);
    const raced = () => total("ok") > 0 && total("outside_root") > 0;
    try {
      await raceFor(4, raced, async (lane, i) => {
        const name = `wdir/new-${lane}-${i}.txt`;
        note(`write ${code(await put(fx.storage, ROOT, name, "EVIL"))}`);
        note(`deep ${code(await put(fx.storage, ROOT, `wdir/sub-${lane}/x.txt`, "EVIL"))}`);
        note(`replace ${code(await put(fx.storage, ROOT, "target.txt", "EVIL"))}`);
        note(`remove ${code(await fx.storage.remove(fileAt(ROOT, "wdir/keep.txt")))}`);
        note(
          `move ${code(await fx.storage.move(fileAt(ROOT, name), fileAt(ROOT, `wdir/moved-${lane}-${i}.txt`), true))}`,
        );
      });
    } finally {
      note(`swap cycles ${await swapper.stop()}`);
    }
    // The race really happened: writes got through, and some met a link.
    expect(total("ok")).toBeGreaterThan(0);
    expect(total("outside_root")).toBeGreaterThan(0);
    for (const outcome of Object.keys(seen).filter((k) => !k.startsWith("swap"))) {
      expect(["ok", "outside_root", "not_found", "conflict"]).toContain(outcome.split(" ")[1]);
    }
    await watch.assertUntouched();
    expect(readFileSync(join(fx.outside, "secret.txt"), "utf8")).toBe(SECRET);
  });
});

describe("atomic writes under concurrency", () => {
  const A = "a".repeat(200 * 1024);
  const B = "b".repeat(200 * 1024);

  it("a concurrent reader sees the old or the new file whole, with matching meta; temps are never listed", async () => {
    expectOk(await put(fx.storage, ROOT, "atomic.txt", A, { contentType: "text/a" }));
    let writes = 0;
    let reads = 0;
    // At least RACE_MS, and until both contents were written and two reads done.
    const started = Date.now();
    const going = () =>
      Date.now() - started < RACE_MS || ((writes < 2 || reads < 2) && Date.now() - started < RACE_LIMIT_MS);
    const writer = (async () => {
      for (let i = 0; going(); i++) {
        const [content, type] = i % 2 ? [A, "text/a"] : [B, "text/b"];
        // Small chunks keep each temp file alive across many reads.
        const w = await fx.storage.write(fileAt(ROOT, "atomic.txt"), bodyOf(content, 16 * 1024), {
          length: content.length,
          contentType: type,
        });
        expectOk(w);
        writes++;
      }
    })();
    const readers = Array.from({ length: 3 }, async (_, lane) => {
      while (going()) {
        const read = expectOk(await fx.storage.read(fileAt(ROOT, "atomic.txt"), {}));
        if (read.status !== "body") throw new Error(read.status);
        const text = await new Response(read.body).text();
        expect(text === A || text === B).toBe(true);
        expect(read.meta.etag).toBe(md5(text));
        expect(read.meta.contentType).toBe(text === A ? "text/a" : "text/b");
        // Straight from the disk, outside the API: never a prefix either.
        const raw = await readFile(join(fx.base, "r/atomic.txt"), "utf8");
        expect(raw === A || raw === B).toBe(true);
        if (lane === 0) {
          const names = expectOk(await fx.storage.list(dirAt(ROOT, ""), { after: null, limit: 10 })).entries.map(
            (e) => e.name,
          );
          expect(names).toEqual(["atomic.txt"]);
        }
        reads++;
      }
    });
    await Promise.all([writer, ...readers]);
    expect(writes).toBeGreaterThan(1);
    expect(reads).toBeGreaterThan(1);
    expect((await readdir(join(fx.base, "r"))).filter((n) => n.startsWith(".capvault-"))).toEqual([]);
  });

  it("If-Match and If-None-Match: * are atomic with the rename: one winner per round", async () => {
    for (let round = 0; round < 15; round++) {
      const path = `race-${round}.txt`;
      const creators = await Promise.all(
        Array.from({ length: 6 }, (_, i) => put(fx.storage, ROOT, path, `c${i}`, { ifNoneMatch: "*" })),
      );
      expect(creators.filter((c) => c.ok)).toHaveLength(1);
      expect(creators.filter((c) => !c.ok).map(code)).toEqual(Array(5).fill("precondition_failed"));
      const current = expectOk(await fx.storage.stat(entryAt(ROOT, path)));
      if (current.type !== "file") throw new Error("not a file");
      const updaters = await Promise.all(
        Array.from({ length: 6 }, (_, i) => put(fx.storage, ROOT, path, `u${i}`, { ifMatch: `"${current.etag}"` })),
      );
      const winners = updaters.flatMap((u, i) => (u.ok ? [`u${i}`] : []));
      expect(winners).toHaveLength(1);
      expect(await readFile(join(fx.base, "r", path), "utf8")).toBe(winners[0]);
    }
  });
});
