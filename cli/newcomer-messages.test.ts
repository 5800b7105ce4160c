/**
 * What a newcomer met on the second day, each a message that now says what to do:
 * typos, a cap missing for `mcp`, a bad CAPVAULT_CAP, a restore's path, rm of a folder, a file too large.
 */
import { describe, expect, it } from "vitest";
import type { FetchLike } from "../clients/typescript/types.ts";
import { runInProcess } from "../test/cli-test-io.ts";
import { redactCapUrls } from "./run-cli.ts";

const CAP = `http://vault.test/object/${"a".repeat(48)}`;
const env = { CAPVAULT_CAP: CAP };

/** A vault double answering by method and route. */
function vault(answer: (method: string, route: string) => [number, unknown]) {
  const calls: string[] = [];
  const fetch: FetchLike = async (input, init) => {
    const url = new URL(input);
    const route = url.pathname.replace(/^\/object\/[^/]+/, "");
    calls.push(`${init?.method ?? "GET"} ${route}`);
    const [status, body] = answer(init?.method ?? "GET", route);
    return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
  };
  return { fetch, calls };
}

describe("typos", () => {
  it.each([
    ["sl", "ls"],
    ["lss", "ls"],
    ["restor", "restore"],
    ["shrae", "share"],
  ])("`%s` suggests `%s`", async (typo, meant) => {
    const run = await runInProcess([typo]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`unknown command '${typo}'; did you mean '${meant}'?`);
  });

  it("suggests nothing for a word near no command", async () => {
    expect((await runInProcess(["frobnicate"])).stderr).toMatch(/unknown command 'frobnicate'\n/);
  });
});

describe("mcp without a cap", () => {
  it("names only the ways mcp takes a cap", async () => {
    const run = await runInProcess(["mcp"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("no cap: set CAPVAULT_CAP or use --cap-file PATH (mcp takes no arguments)");
    expect(run.stderr).not.toMatch(/argument\b(?! *s\))/);
  });
});

describe("a bad CAPVAULT_CAP", () => {
  it("is explained whole: the redaction keeps the shape it names", async () => {
    const run = await runInProcess(["ls"], { env: { CAPVAULT_CAP: "http://x/nope" } });
    expect(run.stderr).toContain("CAPVAULT_CAP is not a cap URL (<origin>/object/<token>)\n");
  });

  it("still redacts real tokens, in brackets too", () => {
    const token = "abcdefghijklmnopqrstuvwxyz234567";
    expect(redactCapUrls(`(see http://v/object/${token}) and [http://v/object/${token}/file]`)).toBe(
      "(see http://v/object/…) and [http://v/object/…/file]",
    );
  });
});

describe("restore", () => {
  it("names the path it wrote", async () => {
    const { fetch } = vault(() => [200, { path: "notes/today.md", size: 5, etag: "e".repeat(32), sha256: "s" }]);
    const run = await runInProcess(["restore", "v".repeat(26)], { env, fetch });
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/^restored notes\/today\.md from version v{26} \(5 B/);
  });
});

describe("rm of a folder", () => {
  it("says it is a folder and what to do, instead of a bare conflict", async () => {
    const { fetch, calls } = vault((method) =>
      method === "DELETE"
        ? [409, { error: { code: "conflict", message: "is a folder" } }]
        : [200, { type: "dir", path: "notes" }],
    );
    const run = await runInProcess(["rm", "notes"], { env, fetch });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      "rm deletes files, and notes is a folder: rm -d removes it once empty; capvault tree notes shows what it holds",
    );
    expect(calls).toEqual(["DELETE /file", "GET /stat"]);
  });
});

describe("too_large", () => {
  it("names the setting that decides a file's size", async () => {
    const { fetch } = vault(() => [413, { error: { code: "too_large", message: "files are limited to 10 bytes" } }]);
    const run = await runInProcess(["put", "-", "big.txt"], { env, fetch, stdin: "more than ten bytes" });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("files are limited to 10 bytes (set by CAPVAULT_MAX_FILE_BYTES");
  });
});
