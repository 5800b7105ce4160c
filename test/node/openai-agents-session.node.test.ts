/**
 * CapSession (clients/openai-agents), an OpenAI Agents JS `Session` over a
 * cap, against a running vault on both backends: side by side with the
 * SDK's own `MemorySession` on seeded random sequences, two processes'
 * sessions adding at once, a real `run()` with a scripted model, and every
 * refusal with its code, the file checked unchanged by plain requests.
 *
 * Reproduce a failure: OPENAI_SESSION_SEED=<seed> npx vitest run --project node test/node/openai-agents-session.node.test.ts
 */
import { Agent, type AgentInputItem, MemorySession, run } from "@openai/agents-core";
import { assistantMessage, ScriptedModel } from "@openai/agents-core/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CapSession, CapSessionError } from "../../clients/openai-agents/index.ts";
import { CapError, FsCap } from "../../clients/typescript/index.ts";
import { seededRandom } from "../seeded-random.ts";
import { type SharedVault, sharedVault } from "./shared-vault.ts";
import { startTestVault, type TestVault } from "./test-vault.ts";

const SEED = Number(process.env.OPENAI_SESSION_SEED || 36);
// Per backend; each sequence 1–30 operations. More: OPENAI_SESSION_SEQUENCES=500.
const SEQUENCES = Number(process.env.OPENAI_SESSION_SEQUENCES || 48);
const LANES = 8;

const SMALL_FILE_BYTES = 64 * 1024;

let vault: SharedVault;
// A vault of its own with a small file limit, for `too_large`: past the shared vault's 100 MiB the refusal
// cuts the upload, and Node's fetch reports the cut, not the answer. It starts while the other tests run.
let small: Promise<TestVault>;
beforeAll(async () => {
  small = startTestVault({ env: { CAPVAULT_MAX_FILE_BYTES: String(SMALL_FILE_BYTES) } });
  small.catch(() => undefined);
  vault = await sharedVault("openai-agents-session");
});
afterAll(async () => {
  await (await small.catch(() => null))?.stop();
});

// Text that a line format could trip on: newlines, U+2028, quotes, backslashes, astral characters.
const TEXTS = ["hi", "", "two\nlines", 'quote " and \\ back', "line\u2028sep", "é😀", "{not: json}", "\r\n"];

function randomItem(next: () => number, n: number): AgentInputItem {
  const text = `${TEXTS[Math.floor(next() * TEXTS.length)]!}#${n}`;
  switch (Math.floor(next() * 4)) {
    case 0:
      return { type: "message", role: "user", content: text };
    case 1:
      return assistantMessage(text, { id: `msg_${n}` });
    case 2:
      return {
        type: "function_call",
        callId: `call_${n}`,
        name: "lookup",
        arguments: JSON.stringify({ q: text }),
        status: "completed",
      };
    default:
      return {
        type: "function_call_result",
        callId: `call_${n}`,
        name: "lookup",
        status: "completed",
        output: { type: "text", text },
      };
  }
}

type Op =
  | { op: "addItems"; items: AgentInputItem[] }
  | { op: "getItems"; limit?: number }
  | { op: "popItem" }
  | { op: "clearSession" };

function sequence(seed: number): Op[] {
  const next = seededRandom(seed);
  const ops: Op[] = [];
  let made = 0;
  const length = 1 + Math.floor(next() * 30);
  for (let i = 0; i < length; i++) {
    const roll = next();
    if (roll < 0.4) {
      const count = Math.floor(next() * 4);
      ops.push({ op: "addItems", items: Array.from({ length: count }, () => randomItem(next, made++)) });
    } else if (roll < 0.7) {
      const limits = [undefined, undefined, 0, -1, 1, 2, 3, 5, 1000];
      ops.push({ op: "getItems", limit: limits[Math.floor(next() * limits.length)] });
    } else if (roll < 0.93) {
      ops.push({ op: "popItem" });
    } else {
      ops.push({ op: "clearSession" });
    }
  }
  return ops;
}

async function apply(session: CapSession | MemorySession, op: Op): Promise<unknown> {
  switch (op.op) {
    case "addItems":
      return session.addItems(op.items);
    case "getItems":
      return session.getItems(op.limit);
    case "popItem":
      return session.popItem();
    case "clearSession":
      return session.clearSession();
  }
}

/** A file's bytes by a plain GET (no SDK), or its status. */
async function raw(capUrl: string, path: string): Promise<string> {
  const res = await fetch(`${capUrl}/file?path=${encodeURIComponent(path)}`);
  return res.status === 200 ? Buffer.from(await res.arrayBuffer()).toString("latin1") : `(status ${res.status})`;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error("expected a rejection");
}

/** A fetch that counts what it is asked, for "refused before any request". */
function countingFetch(): { fetch: typeof fetch; calls: () => number } {
  let calls = 0;
  return {
    fetch: ((input: string, init?: RequestInit) => {
      calls++;
      return fetch(input, init);
    }) as typeof fetch,
    calls: () => calls,
  };
}

/**
 * Fetches for two writers whose first writes wait until both have read: the
 * two race for certain, and one loses. Counts the lost writes (412).
 */
function racingPair(): { fetchOf: () => typeof fetch; conflicts: () => number } {
  let waiting: (() => void)[] = [];
  let conflicts = 0;
  const fetchOf = (): typeof fetch => {
    let first = true;
    return (async (input: string, init?: RequestInit) => {
      if (init?.method === "PUT" && first) {
        first = false;
        await new Promise<void>((resolve) => {
          waiting.push(resolve);
          if (waiting.length === 2) {
            for (const go of waiting) go();
            waiting = [];
          }
        });
      }
      const response = await fetch(input, init);
      if (response.status === 412) conflicts++;
      return response;
    }) as typeof fetch;
  };
  return { fetchOf, conflicts: () => conflicts };
}

const item = (text: string): AgentInputItem => ({ type: "message", role: "user", content: text });

describe.each(["r2", "disk"] as const)("CapSession (%s)", (backend) => {
  const rootUrl = () => (backend === "r2" ? vault.rootCapUrl : vault.diskCapUrl);
  /** A cap of its own for one test, over a fresh folder. */
  const fresh = async () => (await new FsCap(rootUrl()).subdir({ path: `s-${crypto.randomUUID()}` })).url;

  it(`answers as MemorySession does on ${SEQUENCES} seeded sequences (seed ${SEED})`, async () => {
    const url = await fresh();
    const cap = new FsCap(url);
    const runOne = async (s: number) => {
      const seed = SEED * 1000 + s;
      const sessionId = `parity-${s}`;
      // Half in a folder, half at the cap's root: the folder is made by the first write.
      const folder = s % 2 === 0 ? "" : "chats/a";
      const mine = new CapSession(cap, { sessionId, folder });
      const reference = new MemorySession({ sessionId });
      const ops = sequence(seed);
      for (const [i, op] of ops.entries()) {
        const where = `seed ${SEED}, sequence ${s} (seed ${seed}), op ${i}: ${JSON.stringify(op)}`;
        const expected = await apply(reference, op);
        expect(await apply(mine, op), where).toEqual(expected);
      }
      const where = `seed ${SEED}, sequence ${s} (seed ${seed}), at the end`;
      const left = await reference.getItems();
      expect(await mine.getItems(), where).toEqual(left);
      // What a person or another program reads: one JSON object a line, nothing else.
      const text = await raw(url, mine.path);
      if (text === "(status 404)") expect(left, where).toEqual([]);
      else {
        const utf8 = Buffer.from(text, "latin1").toString("utf8");
        expect(utf8, where).toBe(left.map((x) => `${JSON.stringify(x)}\n`).join(""));
      }
      expect(await mine.getSessionId()).toBe(await reference.getSessionId());
    };
    await Promise.all(
      Array.from({ length: LANES }, async (_, lane) => {
        for (let s = lane; s < SEQUENCES; s += LANES) await runOne(s);
      }),
    );
  }, 120_000);

  it("two sessions adding to one id at once lose nothing, each writer's items in its order", async () => {
    const url = await fresh();
    const { fetchOf, conflicts } = racingPair();
    const writers = ["a", "b"].map((name) => ({
      name,
      session: new CapSession(new FsCap(url, { fetch: fetchOf() }), { sessionId: "shared" }),
    }));
    await Promise.all(
      writers.map(async ({ name, session }) => {
        for (let i = 0; i < 8; i++) {
          await session.addItems(i % 3 === 0 ? [item(`${name}${i}`), item(`${name}${i}+`)] : [item(`${name}${i}`)]);
        }
      }),
    );
    expect(conflicts()).toBeGreaterThan(0);
    const texts = (await new CapSession(url, { sessionId: "shared" }).getItems()).map(
      (x) => (x as { content: string }).content,
    );
    expect(texts).toHaveLength(22);
    for (const name of ["a", "b"]) {
      const expected = [0, 1, 2, 3, 4, 5, 6, 7].flatMap((i) =>
        i % 3 === 0 ? [`${name}${i}`, `${name}${i}+`] : [`${name}${i}`],
      );
      expect(texts.filter((t) => t.startsWith(name))).toEqual(expected);
    }
  });

  it("pops racing adds: each item popped once or still there, none lost, none twice", async () => {
    const url = await fresh();
    await new CapSession(url, { sessionId: "mixed" }).addItems(Array.from({ length: 6 }, (_, i) => item(`old${i}`)));
    const { fetchOf, conflicts } = racingPair();
    const popper = new CapSession(new FsCap(url, { fetch: fetchOf() }), { sessionId: "mixed" });
    const adder = new CapSession(new FsCap(url, { fetch: fetchOf() }), { sessionId: "mixed" });
    const popped: AgentInputItem[] = [];
    await Promise.all([
      (async () => {
        for (let i = 0; i < 5; i++) popped.push((await popper.popItem())!);
      })(),
      (async () => {
        for (let i = 0; i < 5; i++) await adder.addItems([item(`new${i}`)]);
      })(),
    ]);
    expect(conflicts()).toBeGreaterThan(0);
    const left = await new CapSession(url, { sessionId: "mixed" }).getItems();
    const texts = [...popped, ...left].map((x) => (x as { content: string }).content);
    expect(texts.sort()).toEqual(
      [...Array.from({ length: 6 }, (_, i) => `old${i}`), ...Array.from({ length: 5 }, (_, i) => `new${i}`)].sort(),
    );
    expect(left).toHaveLength(6);
  });

  it("a writer that loses every race gives up after `attempts` with contended, and writes nothing", async () => {
    const url = await fresh();
    const racer = new FsCap(url);
    let puts = 0;
    const losing = (async (input: string, init?: RequestInit) => {
      if (init?.method === "PUT") {
        puts++;
        await racer.write("s.jsonl", `${JSON.stringify(item(`racer ${puts}`))}\n`);
      }
      return fetch(input, init);
    }) as typeof fetch;
    const session = new CapSession(url, { sessionId: "s", attempts: 3, fetch: losing });
    const error = await rejection(session.addItems([item("mine")]));
    expect(error).toBeInstanceOf(CapSessionError);
    expect(error).toMatchObject({ code: "contended", path: "s.jsonl" });
    expect((error as Error).cause).toMatchObject({ code: "precondition_failed" });
    expect(puts).toBe(3);
    expect(await raw(url, "s.jsonl")).toBe(`${JSON.stringify(item("racer 3"))}\n`);
  });

  it("a read-only cap reads; adds, pops and clears are forbidden; a revoked one is no_such_cap; the file stays", async () => {
    const url = await fresh();
    const owner = new CapSession(url, { sessionId: "chat", folder: "sessions" });
    await owner.addItems([item("one"), item("two")]);
    const before = await raw(url, "sessions/chat.jsonl");
    const reader = await new FsCap(url).subdir({ path: "", rights: ["read", "list"] });
    const readOnly = new CapSession(reader.url, { sessionId: "chat", folder: "sessions" });
    expect(await readOnly.getItems()).toEqual([item("one"), item("two")]);
    expect(await readOnly.getItems(1)).toEqual([item("two")]);
    for (const call of [
      () => readOnly.addItems([item("three")]),
      () => readOnly.popItem(),
      () => readOnly.clearSession(),
    ]) {
      const error = await rejection(call());
      expect(error).toBeInstanceOf(CapError);
      expect(error).toMatchObject({ code: "forbidden", status: 403 });
    }
    expect(await raw(url, "sessions/chat.jsonl")).toBe(before);

    await reader.revoke();
    for (const call of [
      () => readOnly.getItems(),
      () => readOnly.addItems([item("three")]),
      () => readOnly.popItem(),
      () => readOnly.clearSession(),
    ]) {
      expect(await rejection(call())).toMatchObject({ name: "CapError", code: "no_such_cap", status: 404 });
    }
    expect(await raw(url, "sessions/chat.jsonl")).toBe(before);
  });

  it("a session id that cannot be one file name is refused before any request", async () => {
    const url = await fresh();
    const counted = countingFetch();
    const bad: unknown[] = [
      "",
      "a/b",
      "/abs",
      "..",
      "../up",
      "a..b",
      "nul\u0000",
      "tab\there",
      "new\nline",
      "del\u007f",
      "sep\u2028",
      "back\\slash",
      "lone\ud800",
      "x".repeat(250),
      ".capvault-mine",
      "~home",
      42,
      null,
    ];
    for (const sessionId of bad) {
      let error: unknown;
      try {
        new CapSession(url, { sessionId: sessionId as string, fetch: counted.fetch });
      } catch (e) {
        error = e;
      }
      expect(error, JSON.stringify(sessionId)).toBeInstanceOf(CapSessionError);
      expect(error, JSON.stringify(sessionId)).toMatchObject({ code: "invalid_session_id" });
    }
    expect(() => new CapSession(url, { sessionId: "a/b" })).toThrow(
      `session id "a/b" contains '/': a session is one file, not a path`,
    );
    expect(() => new CapSession(url, { sessionId: "x".repeat(250) })).toThrow(
      /makes no file name the vault takes \(invalid_path: /,
    );
    // The longest that fits, and names other clients would escape, are fine.
    for (const ok of ["x".repeat(249), "chat 42 (é)", "~ok", "a.b"]) {
      expect(() => new CapSession(url, { sessionId: ok, folder: "f" })).not.toThrow();
    }
    expect(() => new CapSession(url, { folder: "../x" })).toThrow(TypeError);
    expect(counted.calls()).toBe(0);
    expect((await new FsCap(url).listPage("", { depth: 0 })).entries).toEqual([]);
  });

  it("an item JSON cannot hold exactly is refused before any request", async () => {
    const url = await fresh();
    const counted = countingFetch();
    const session = new CapSession(url, { sessionId: "s", fetch: counted.fetch });
    const cyclic: Record<string, unknown> = { type: "message", role: "user", content: "x" };
    cyclic.self = cyclic;
    const cases: [unknown, RegExp][] = [
      [{ type: "message", role: "user", content: [{ type: "input_image", image: new Uint8Array([1]) }] }, /Uint8Array/],
      [{ type: "message", role: "user", content: "x", n: Number.NaN }, /NaN/],
      [{ type: "message", role: "user", content: "x", at: new Date(0) }, /a Date/],
      [{ type: "message", role: "user", content: ["a", undefined] }, /undefined/],
      [{ type: "message", role: "user", content: "x", n: 1n }, /bigint/],
      [cyclic, /refers back to itself/],
      ["just text", /not an object/],
      [null, /null, not an object/],
    ];
    for (const [bad, why] of cases) {
      const error = await rejection(session.addItems([item("fine"), bad as AgentInputItem]));
      expect(error).toBeInstanceOf(CapSessionError);
      expect(error).toMatchObject({ code: "invalid_item" });
      expect((error as Error).message).toMatch(/^items\[1\]/);
      expect((error as Error).message).toMatch(why);
    }
    expect(counted.calls()).toBe(0);
    expect(await raw(url, "s.jsonl")).toBe("(status 404)");
  });

  it("a corrupt line is an error naming its line, for every call but clear; nothing is skipped or changed", async () => {
    const url = await fresh();
    const cap = new FsCap(url);
    const good = JSON.stringify(item("ok"));
    const files: [string, Uint8Array, number, RegExp][] = [
      ["not JSON", new TextEncoder().encode(`${good}\n${good}\nnot json\n${good}\n`), 3, /line 3 is not JSON/],
      ["bad UTF-8", new Uint8Array([...new TextEncoder().encode(`${good}\n`), 0xff, 0x7b, 0x7d, 0x0a]), 2, /not UTF-8/],
      ["an empty line", new TextEncoder().encode(`${good}\n\n${good}\n`), 2, /line 2 is empty/],
      ["not an object", new TextEncoder().encode(`[1]\n`), 1, /line 1 is an array, not a JSON object/],
    ];
    for (const [what, bytes, line, why] of files) {
      await cap.write("c.jsonl", bytes);
      const before = await raw(url, "c.jsonl");
      const session = new CapSession(url, { sessionId: "c" });
      for (const call of [
        () => session.getItems(),
        () => session.getItems(1),
        () => session.addItems([item("more")]),
        () => session.popItem(),
      ]) {
        const error = await rejection(call());
        expect(error, what).toBeInstanceOf(CapSessionError);
        expect(error, what).toMatchObject({ code: "corrupt_file", path: "c.jsonl", line });
        expect((error as Error).message, what).toMatch(why);
      }
      expect(await raw(url, "c.jsonl"), what).toBe(before);
      await session.clearSession();
      expect(await raw(url, "c.jsonl"), what).toBe("(status 404)");
      await session.clearSession();
    }
  });

  it("a file edited by hand without its last newline still reads, and an append starts a new line", async () => {
    const url = await fresh();
    await new FsCap(url).write("h.jsonl", `${JSON.stringify(item("typed"))}\r\n${JSON.stringify(item("by hand"))}`);
    const session = new CapSession(url, { sessionId: "h" });
    expect(await session.getItems()).toEqual([item("typed"), item("by hand")]);
    await session.addItems([item("appended")]);
    expect(await session.getItems()).toEqual([item("typed"), item("by hand"), item("appended")]);
    expect(await session.popItem()).toEqual(item("appended"));
    expect(await session.popItem()).toEqual(item("by hand"));
    // The lines left are the bytes that were there, not re-encoded.
    expect(await raw(url, "h.jsonl")).toBe(`${JSON.stringify(item("typed"))}\r\n`);
  });

  it("is the session of a real run(): history goes to the model, the turn lands in the file", async () => {
    const url = await fresh();
    const model = new ScriptedModel([[assistantMessage("Hello, Ada.")], [assistantMessage("You are Ada.")]]);
    const agent = new Agent({ name: "assistant", instructions: "Be brief.", model });
    const session = new CapSession(url, { sessionId: "run-1", folder: "sessions" });
    expect((await run(agent, "I am Ada.", { session })).finalOutput).toBe("Hello, Ada.");
    // Another process, another instance: the history is in the vault, not in memory.
    const later = new CapSession(url, { sessionId: "run-1", folder: "sessions" });
    expect((await run(agent, "Who am I?", { session: later })).finalOutput).toBe("You are Ada.");
    const sent = JSON.stringify(model.lastCall!.request.input);
    expect(sent).toContain("I am Ada.");
    expect(sent).toContain("Hello, Ada.");
    const lines = (await raw(url, "sessions/run-1.jsonl"))
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect(await later.getItems()).toEqual(lines);
  });
});

describe.each(["r2", "disk"] as const)("an item over the vault's file size (%s)", (backend) => {
  it("is the vault's too_large refusal, and nothing of its batch lands", async () => {
    const { rootCapUrl, diskCapUrl } = await small;
    const root = new FsCap(backend === "r2" ? rootCapUrl : diskCapUrl);
    const url = (await root.subdir({ path: `big-${crypto.randomUUID()}` })).url;
    const session = new CapSession(url, { sessionId: "big" });
    await session.addItems([item("before")]);
    const before = await raw(url, "big.jsonl");
    const error = await rejection(session.addItems([item("small"), item("x".repeat(SMALL_FILE_BYTES))]));
    expect(error).toBeInstanceOf(CapError);
    expect(error).toMatchObject({ code: "too_large", status: 413 });
    expect(await raw(url, "big.jsonl")).toBe(before);
    expect(await session.getItems()).toEqual([item("before")]);
    // One under the limit still fits: the refusal was the size, not the item.
    await session.addItems([item("x".repeat(SMALL_FILE_BYTES / 2))]);
    expect(await session.getItems(1)).toEqual([item("x".repeat(SMALL_FILE_BYTES / 2))]);
  });
});
