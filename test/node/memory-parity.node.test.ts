/**
 * The memory tool against Anthropic's reference, side by side: the
 * reference `BetaLocalFilesystemMemoryTool` (@anthropic-ai/sdk) over a real
 * temp folder, and the vault's memory route over a real vault (an R2 cap and
 * a disk cap), on seeded random sequences of the same commands. Each answer
 * must agree: a success's text exactly, an error in the reference's words
 * exactly (`Error: <its message>`), and an error the vault words as a cap
 * refusal (`Error: <code>: …`) or the reference passes on from the OS only as an error. The one thing left out of a
 * comparison is the size of a folder in a `view`, a deliberate difference,
 * tested below with the others.
 *
 * Reproduce a failure: MEMORY_PARITY_SEED=<seed> npx vitest run --project node test/node/memory-parity.node.test.ts
 */
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { BetaLocalFilesystemMemoryTool } from "@anthropic-ai/sdk/tools/memory/node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seededRandom } from "../seeded-random.ts";
import { type SharedVault, sharedVault } from "./shared-vault.ts";

// Per backend: 30 sequences in all.
const SEQUENCES = 15;
const COMMANDS = 20;
const SEED = Number(process.env.MEMORY_PARITY_SEED || 23);

let vault: SharedVault;
const bases: string[] = [];

beforeAll(async () => {
  vault = await sharedVault("memory-parity");
});
afterAll(async () => {
  for (const base of bases) await rm(base, { recursive: true, force: true });
});

async function referenceTool(): Promise<BetaLocalFilesystemMemoryTool> {
  const base = await mkdtemp(path.join(os.tmpdir(), "capvault-parity-"));
  bases.push(base);
  const tool = await BetaLocalFilesystemMemoryTool.init(base);
  baseOf.set(tool, base);
  return tool;
}
const baseOf = new WeakMap<BetaLocalFilesystemMemoryTool, string>();

/** Whether a memory path exists in the reference's folder (`/memories/x` is `<base>/memories/x`). */
function referenceHas(tool: BetaLocalFilesystemMemoryTool, memoryPath: string): boolean {
  return existsSync(path.join(baseOf.get(tool)!, memoryPath));
}

type Input = Record<string, unknown>;
type Answer = { error: boolean; text: string };

/**
 * Commands over a few files and folders of `dir`: files made, viewed, edited,
 * deleted and renamed, folders deleted and renamed (emptied ones stay, as in
 * the reference), a file made where a folder is. Left out: what the
 * deliberate differences below cover (old_str across lines or twice on one
 * line, an empty old_str, a non-integer insert_line, a rename into itself,
 * and, skipped when run, a rename of a missing source).
 */
function sequence(seed: number, dir: string): Input[] {
  const next = seededRandom(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const files = [`${dir}/a.md`, `${dir}/b.md`, `${dir}/n/c.md`, `${dir}/n/m/d.md`];
  const folders = [`${dir}/n`, `${dir}/n/m`, `${dir}/k`];
  const texts = ["x", "x\n", "one\ntwo\n", "one\ntwo", "", "a\nb\nc\n", "\n"];
  const commands: Input[] = [];
  for (let i = 0; i < COMMANDS; i++) {
    const file = pick(files);
    switch (pick(["create", "create", "view", "viewDir", "insert", "insert", "replace", "delete", "rename"] as const)) {
      case "create":
        commands.push({ command: "create", path: next() < 0.1 ? pick(folders) : file, file_text: pick(texts) });
        break;
      case "view":
        commands.push({ command: "view", path: file });
        break;
      case "viewDir":
        commands.push({ command: "view", path: pick([dir, ...folders]) });
        break;
      case "insert":
        commands.push({ command: "insert", path: file, insert_line: Math.floor(next() * 5), insert_text: pick(texts) });
        break;
      case "replace":
        commands.push({ command: "str_replace", path: file, old_str: pick(["one", "x", "b", "two"]), new_str: "y" });
        break;
      case "delete":
        commands.push({ command: "delete", path: next() < 0.3 ? pick(folders) : file });
        break;
      case "rename": {
        const [from, to] = next() < 0.3 ? [pick(folders), pick(folders)] : [file, pick(files)];
        // Into itself is a deliberate difference (below).
        if (to.startsWith(`${from}/`)) continue;
        commands.push({ command: "rename", old_path: from, new_path: to });
        break;
      }
    }
  }
  // What each sequence left, on both sides.
  for (const folder of [dir, ...folders]) commands.push({ command: "view", path: folder });
  return commands;
}

async function reference(tool: BetaLocalFilesystemMemoryTool, input: Input): Promise<Answer> {
  try {
    const run = (tool as unknown as Record<string, (command: Input) => Promise<string>>)[input.command as string]!;
    return { error: false, text: await run.call(tool, input) };
  } catch (error) {
    // What a tool runner sends back to the model for a thrown error, as the vault answers it.
    return { error: true, text: `Error: ${(error as Error).message}` };
  }
}

async function vaultAnswer(capUrl: string, input: Input): Promise<Answer> {
  const response = await fetch(`${capUrl}/memory`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(input),
  });
  return { error: response.headers.has("capvault-error-code"), text: await response.text() };
}

/**
 * An error in no one's tool words: a cap refusal the vault words itself
 * (`Error: <wire code>: …`), or an OS error the reference passes on
 * (`Error: ENOTDIR: …`, naming its host path, which the vault never does).
 */
const CAP_REFUSAL = /^Error: ([a-z_]+|E[A-Z]+): /;

/** What must be equal: a folder's view without the folders' sizes; a reference-worded error whole. */
function comparable(answer: Answer, other: Answer): unknown {
  if (answer.error)
    return other.error && (CAP_REFUSAL.test(other.text) || CAP_REFUSAL.test(answer.text)) ? "error" : answer.text;
  if (!answer.text.startsWith("Here're the files and directories")) return answer.text;
  const [header, , ...items] = answer.text.split("\n");
  return [header, ...items.map((line) => (line.endsWith("/") ? line.split("\t")[1] : line))];
}

const backends = [
  ["R2", () => vault.rootCapUrl],
  ["disk", () => vault.diskCapUrl],
] as const;

describe.each(backends)("the memory tool on %s as the reference", (backend, capUrl) => {
  it(`answers ${SEQUENCES} seeded sequences of ${COMMANDS} commands as the reference does (seed ${SEED})`, async () => {
    const tool = await referenceTool();
    // Sequences in folders of their own, a few at once: each runs its commands in order.
    const run = async (s: number) => {
      const dir = `/memories/parity-${backend}-${SEED}-${s}`;
      for (const [i, input] of sequence(SEED * 1000 + s, dir).entries()) {
        // The reference makes the destination's folders before it finds the source missing (tested below).
        if (input.command === "rename" && !referenceHas(tool, input.old_path as string)) continue;
        const expected = await reference(tool, input);
        const got = await vaultAnswer(capUrl(), input);
        const where = `seed ${SEED}, sequence ${s}, command ${i}: ${JSON.stringify(input)}`;
        expect(comparable(got, expected), `${where}\nreference: ${expected.text}\nvault: ${got.text}`).toEqual(
          comparable(expected, got),
        );
      }
    };
    const LANES = 6;
    await Promise.all(
      Array.from({ length: LANES }, async (_, lane) => {
        for (let s = lane; s < SEQUENCES; s += LANES) await run(s);
      }),
    );
  });
});

/**
 * Where the vault answers otherwise on purpose (docs/memory-tool.md says why):
 * each case run on both, each answer checked, so a change on either side shows.
 */
describe("deliberate differences from the reference", () => {
  let tool: BetaLocalFilesystemMemoryTool;
  let counter = 0;
  beforeAll(async () => {
    tool = await referenceTool();
  });
  /** The same setup, then `input`, on both sides, in a folder of its own. */
  const both = async (files: Record<string, string>, input: (dir: string) => Input) => {
    const dir = `/memories/deliberate-${++counter}`;
    for (const [name, text] of Object.entries(files)) {
      const setup = { command: "create", path: `${dir}/${name}`, file_text: text };
      expect((await reference(tool, setup)).error).toBe(false);
      expect((await vaultAnswer(vault.rootCapUrl, setup)).error).toBe(false);
    }
    const command = input(dir);
    const after = { command: "view", path: `${dir}/${Object.keys(files)[0]}` };
    return {
      dir,
      reference: await reference(tool, command),
      referenceAfter: await reference(tool, after),
      vault: await vaultAnswer(vault.rootCapUrl, command),
      vaultAfter: await vaultAnswer(vault.rootCapUrl, after),
    };
  };
  const numbered = (...lines: string[]) => lines.map((line, i) => `${String(i + 1).padStart(6, " ")}\t${line}`);

  it("an old_str across lines: the reference compares line by line and never finds it; the vault replaces it", async () => {
    const r = await both({ "a.md": "one\ntwo\nthree\n" }, (dir) => ({
      command: "str_replace",
      path: `${dir}/a.md`,
      old_str: "one\ntwo",
      new_str: "1 2",
    }));
    expect(r.reference).toEqual({
      error: true,
      text: `Error: No replacement was performed, old_str \`one\ntwo\` did not appear verbatim in ${r.dir}/a.md.`,
    });
    expect(r.vault.error).toBe(false);
    expect(r.vaultAfter.text).toBe(
      [`Here's the content of ${r.dir}/a.md with line numbers:`, ...numbered("1 2", "three", "")].join("\n"),
    );
  });

  it("an old_str twice on one line: the reference replaces the first; the vault refuses, it is not unique", async () => {
    const r = await both({ "a.md": "x and x\n" }, (dir) => ({
      command: "str_replace",
      path: `${dir}/a.md`,
      old_str: "x",
      new_str: "y",
    }));
    expect(r.reference.error).toBe(false);
    expect(r.referenceAfter.text).toContain("y and x");
    expect(r.vault).toEqual({
      error: true,
      text: "Error: No replacement was performed. Multiple occurrences of old_str `x` in lines: 1. Please ensure it is unique",
    });
    expect(r.vaultAfter.text).toContain("x and x");
  });

  it("an empty old_str: the reference puts new_str before a one-line file; the vault refuses", async () => {
    const r = await both({ "a.md": "note" }, (dir) => ({
      command: "str_replace",
      path: `${dir}/a.md`,
      old_str: "",
      new_str: "pre ",
    }));
    expect(r.reference.error).toBe(false);
    expect(r.referenceAfter.text).toContain("pre note");
    expect(r.vault.error).toBe(true);
    expect(r.vault.text).toMatch(/old_str is empty/);
    expect(r.vaultAfter.text).toContain("\tnote");
  });

  it("a non-integer insert_line: the reference truncates it; the vault refuses", async () => {
    const r = await both({ "a.md": "a\nb" }, (dir) => ({
      command: "insert",
      path: `${dir}/a.md`,
      insert_line: 1.5,
      insert_text: "x",
    }));
    expect(r.reference.error).toBe(false);
    expect(r.referenceAfter.text).toContain(numbered("a", "x").join("\n"));
    expect(r.vault.text).toBe(
      "Error: Invalid `insert_line` parameter: 1.5. It should be within the range of lines of the file: [0, 2]",
    );
  });

  it("a folder's size in a view: the reference prints its inode's size, the vault the bytes of the files beneath", async () => {
    const r = await both({ "f/a.md": "12345", "f/g/b.md": "1234567" }, (dir) => ({
      command: "view",
      path: `${dir}/f`,
    }));
    expect(r.reference.text.split("\n").slice(1)).toEqual([
      expect.stringMatching(new RegExp(`^\\d+(\\.\\d)?[BK]\\t${r.dir}/f$`)),
      `5B\t${r.dir}/f/a.md`,
      expect.stringMatching(new RegExp(`^\\d+(\\.\\d)?[BK]\\t${r.dir}/f/g/$`)),
      `7B\t${r.dir}/f/g/b.md`,
    ]);
    expect(r.vault.text.split("\n").slice(1)).toEqual([
      `12B\t${r.dir}/f`,
      `5B\t${r.dir}/f/a.md`,
      `7B\t${r.dir}/f/g/`,
      `7B\t${r.dir}/f/g/b.md`,
    ]);
  });

  it("a folder viewed with a trailing slash: the reference lists `//`, the vault one `/`", async () => {
    const r = await both({ "f/a.md": "1" }, (dir) => ({ command: "view", path: `${dir}/f/` }));
    expect(r.reference.text).toContain(`\t${r.dir}/f//a.md`);
    expect(r.vault.text).toContain(`\t${r.dir}/f/a.md`);
    expect(r.vault.text).not.toContain("//");
  });

  it("/memoriesX: the reference takes it as /memories/X; the vault refuses it", async () => {
    const input = { command: "create", path: "/memoriesX-parity/a.md", file_text: "x" };
    expect(await reference(tool, input)).toEqual({
      error: false,
      text: "File created successfully at: /memoriesX-parity/a.md",
    });
    const got = await vaultAnswer(vault.rootCapUrl, input);
    expect(got.error).toBe(true);
    expect(got.text).toMatch(/^Error: invalid_path: /);
  });

  it("a rename of a missing file: both refuse, but the reference first makes the destination's folders", async () => {
    const r = await both({ "a.md": "1" }, (dir) => ({
      command: "rename",
      old_path: `${dir}/none.md`,
      new_path: `${dir}/made/b.md`,
    }));
    expect(r.reference).toEqual({ error: true, text: `Error: The path ${r.dir}/none.md does not exist` });
    expect(r.vault).toEqual(r.reference);
    const view = { command: "view", path: r.dir };
    expect((await reference(tool, view)).text).toContain(`${r.dir}/made/`);
    expect((await vaultAnswer(vault.rootCapUrl, view)).text).not.toContain(`${r.dir}/made/`);
  });

  it("a rename into itself: both refuse, but the reference first makes the destination's folders inside the source", async () => {
    const r = await both({ "f/a.md": "1" }, (dir) => ({
      command: "rename",
      old_path: `${dir}/f`,
      new_path: `${dir}/f/g/h`,
    }));
    expect(r.reference.error).toBe(true);
    expect(r.vault).toMatchObject({ error: true, text: expect.stringMatching(/^Error: Cannot move the directory/) });
    const view = { command: "view", path: `${r.dir}/f` };
    expect((await reference(tool, view)).text).toContain(`${r.dir}/f/g/`);
    expect((await vaultAnswer(vault.rootCapUrl, view)).text).not.toContain(`${r.dir}/f/g/`);
  });
});

it("sizes of files in a view print as the reference's (ties rounded up)", async () => {
  const tool = await referenceTool();
  const dir = "/memories/sizes";
  for (const bytes of [0, 1023, 1024, 1280, 1331, 1536, 1792, 2047, 3840]) {
    const setup = { command: "create", path: `${dir}/${bytes}.md`, file_text: "x".repeat(bytes) };
    await reference(tool, setup);
    await vaultAnswer(vault.rootCapUrl, setup);
  }
  const view = { command: "view", path: dir };
  const expected = await reference(tool, view);
  const got = await vaultAnswer(vault.rootCapUrl, view);
  expect(got.text.split("\n").slice(2)).toEqual(expected.text.split("\n").slice(2));
});
