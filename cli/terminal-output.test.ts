/**
 * What the CLI prints from the vault cannot drive the terminal: names,
 * labels, content types and error messages are chosen by whoever wrote them,
 * so control characters (C0, DEL, C1), bidi overrides and isolates and line
 * separators show as visible escapes in human output; JSON output keeps the
 * exact strings. And a cap URL on the command line, which every local user
 * can read in `ps`, draws one line of warning; --cap-file and CAPVAULT_CAP
 * do not.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FetchLike } from "../clients/typescript/types.ts";
import { runInProcess } from "../test/cli-test-io.ts";
import { ARGUMENT_WARNING } from "./cap-source.ts";
import { terminalSafe } from "./terminal-safe.ts";

const TOKEN = "abcdefghijklmnopqrstuvwxyz234567";
const CAP = `http://vault.test/object/${TOKEN}`;
const env = { CAPVAULT_CAP: CAP };
const json = (status: number, value: unknown) =>
  new Response(JSON.stringify(value), { status, headers: { "content-type": "application/json" } });
const answer =
  (value: unknown, status = 200): FetchLike =>
  async () =>
    json(status, value);

/** Every character that must never reach a terminal raw. */
const HOSTILE = [
  "\u0000",
  "\u0007",
  "\b",
  "\t",
  "\n",
  "\r",
  "\u001b",
  "\u007f",
  "\u0080",
  "\u0085",
  "\u009b",
  "\u009f",
  "\u2028",
  "\u2029",
  "\u202a",
  "\u202b",
  "\u202c",
  "\u202d",
  "\u202e",
  "\u2066",
  "\u2067",
  "\u2068",
  "\u2069",
  // Bidi marks: they reorder neighbouring text as an override does, one character at a time.
  "\u061c",
  "\u200e",
  "\u200f",
];
/** Any of them raw, except the newline that ends each output line (line counts check that one). */
const RAW = new RegExp(`[${HOSTILE.filter((c) => c !== "\n").join("")}]`, "u");
/** A name that, printed raw, would clear the screen, fake a second line and reverse the rest of the line. */
const EVIL_NAME = "ok\u001b[2J\u001b]0;owned\u0007\nfake line\u202etxt.exe\u2028\u009b31m";

describe("terminalSafe", () => {
  it("escapes each hostile character visibly and leaves ordinary text alone", () => {
    for (const c of HOSTILE) expect(terminalSafe(`a${c}b`)).toMatch(/^a\\(x[0-9a-f]{2}|u[0-9a-f]{4})b$/);
    expect(terminalSafe("\u001b[31m")).toBe("\\x1b[31m");
    expect(terminalSafe("\u202egnp.exe")).toBe("\\u202egnp.exe");
    const ordinary = "notes/été 😀 日本 a-b_c.d (1) \\ é \u200d \u00a0";
    expect(terminalSafe(ordinary)).toBe(ordinary);
  });
});

describe("human output escapes what came from the vault", () => {
  it("ls: names, plain and long; --json keeps the exact names", async () => {
    const entries = [
      { name: EVIL_NAME, type: "file", size: 1, etag: "e", modified: "2025-01-01T00:00:00.000Z" },
      { name: "dir\u202e", type: "dir" },
    ];
    const fetch = answer({ entries, cursor: null });
    for (const args of [["ls"], ["ls", "-l"]]) {
      const run = await runInProcess(args, { fetch, env });
      expect(run.code).toBe(0);
      expect(run.out).not.toMatch(RAW);
      expect(run.out.split("\n").filter(Boolean)).toHaveLength(2);
      expect(run.out).toContain("ok\\x1b[2J\\x1b]0;owned\\x07\\x0afake line\\u202etxt.exe\\u2028\\x9b31m");
      expect(run.out).toContain("dir\\u202e/");
    }
    expect(JSON.parse((await runInProcess(["ls", "--json"], { fetch, env })).out)).toEqual({ entries });
  });

  it("stat: the stored content type", async () => {
    const fetch = answer({
      type: "file",
      size: 1,
      etag: "e",
      modified: "2025-01-01T00:00:00.000Z",
      contentType: "text/plain\u001b[8m\u0085x",
    });
    const run = await runInProcess(["stat", "f"], { fetch, env });
    expect(run.out).not.toMatch(RAW);
    expect(run.out).toContain("content-type  text/plain\\x1b[8m\\x85x\n");
  });

  it("info and children: labels and paths", async () => {
    const info = await runInProcess(["info"], {
      fetch: answer({
        id: "i1",
        rights: ["read"],
        label: "safe\u202eevil\u2066",
        createdAt: "2025-01-01T00:00:00.000Z",
        expiresAt: null,
        parent: null,
      }),
      env,
    });
    expect(info.out).not.toMatch(RAW);
    expect(info.out).toContain("label    safe\\u202eevil\\u2066\n");
    const children = await runInProcess(["children"], {
      fetch: answer({
        children: [
          {
            id: "k1",
            label: "l\u001b]8;;http://x\u0007",
            path: "p\u2029q",
            rights: ["read"],
            createdAt: "x",
            expiresAt: null,
          },
        ],
      }),
      env,
    });
    expect(children.out).not.toMatch(RAW);
    expect(children.out).toContain("p\\u2029q");
    expect(children.out).toContain("l\\x1b]8;;http://x\\x07");
  });

  it("error messages from the vault, on stderr", async () => {
    const run = await runInProcess(["cat", "x"], {
      fetch: answer({ error: { code: "not_found", message: "nothing\u001b[2J\nfake: ok\u202e" } }, 404),
      env,
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe("capvault: not_found: nothing\\x1b[2J\\x0afake: ok\\u202e\n");
  });
});

describe("where the cap comes from", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "capvault-cli-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });
  const statFetch = () => {
    const urls: string[] = [];
    const fetch: FetchLike = async (input) => {
      urls.push(String(input));
      return json(200, { type: "dir" });
    };
    return { fetch, urls };
  };

  it("a cap URL as an argument works, with one line of warning; CAPVAULT_CAP draws none", async () => {
    const { fetch } = statFetch();
    const argument = await runInProcess(["stat", CAP, "docs"], { fetch });
    expect(argument.code).toBe(0);
    expect(argument.stderr).toBe(ARGUMENT_WARNING);
    expect(argument.stderr).not.toContain(TOKEN);
    expect(ARGUMENT_WARNING).toMatch(/CAPVAULT_CAP or --cap-file/);
    const fromEnv = await runInProcess(["stat", "docs"], { fetch, env });
    expect(fromEnv).toMatchObject({ code: 0, stderr: "" });
  });

  it("--cap-file reads the cap from a file, without a warning", async () => {
    const file = path.join(dir, "cap");
    await writeFile(file, `${CAP}\n`, { mode: 0o600 });
    const { fetch, urls } = statFetch();
    const run = await runInProcess(["stat", "--cap-file", file, "docs"], {
      fetch,
      env: { CAPVAULT_CAP: "http://other.test/object/qqqq" },
    });
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(urls).toEqual([`${CAP}/stat?path=docs`]);
  });

  it("--cap-file refuses junk, a missing file, and a second cap, without echoing the file", async () => {
    const junk = path.join(dir, "junk");
    await writeFile(junk, `secret-${TOKEN}`);
    const { fetch, urls } = statFetch();
    for (const args of [
      ["stat", "--cap-file", junk, "docs"],
      ["stat", "--cap-file", path.join(dir, "missing"), "docs"],
      ["stat", "--cap-file", junk, CAP, "docs"],
    ]) {
      const run = await runInProcess(args, { fetch });
      expect(run.code).toBe(2);
      expect(run.stderr).not.toContain(TOKEN);
    }
    expect(urls).toEqual([]);
  });

  it("--help shows --cap-file for commands that take a cap, not for mint", async () => {
    expect((await runInProcess(["ls", "--help"])).out).toContain("--cap-file PATH");
    expect((await runInProcess(["mint", "--help"])).out).not.toContain("--cap-file");
    expect((await runInProcess(["--help"])).out).toMatch(/CAPVAULT_CAP or --cap-file PATH \(preferred\)/);
  });
});
