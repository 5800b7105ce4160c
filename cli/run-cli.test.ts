/**
 * The CLI without a vault: parsing, help, exit codes and output formats, with
 * a fetch double standing in for the server. End-to-end runs against the real
 * launcher are in test/node/cli.node.test.ts.
 */
import { describe, expect, it } from "vitest";
import type { FetchLike } from "../clients/typescript/types.ts";
import { RELEASE, STATE_FORMAT } from "../shared/state-format.ts";
import { runInProcess } from "../test/cli-test-io.ts";
import { ARGUMENT_WARNING } from "./cap-source.ts";
import { COMMANDS } from "./command-table.ts";
import { formatBytes, formatChildren, formatEntry, formatStat } from "./human-format.ts";
import { redactCapUrls } from "./run-cli.ts";
import { PROGRESS_THRESHOLD_BYTES, renderProgress } from "./transfer/progress-bar.ts";

const TOKEN = "abcdefghijklmnopqrstuvwxyz234567";
const CAP = `http://vault.test/object/${TOKEN}`;

const json = (status: number, value: unknown) =>
  new Response(JSON.stringify(value), { status, headers: { "content-type": "application/json" } });

/** A fetch double that records which paths and bodies reached "the server". */
function fake(answer: (url: URL, init: RequestInit | undefined) => Response | Promise<Response>) {
  const calls: { method: string; url: URL; body: unknown }[] = [];
  const fetch: FetchLike = async (input, init) => {
    const url = new URL(input);
    calls.push({ method: init?.method ?? "GET", url, body: init?.body });
    return answer(url, init);
  };
  return { fetch, calls };
}

describe("--version", () => {
  it("prints the release and the state format this build writes, exit 0; --json as an object", async () => {
    const run = await runInProcess(["--version"]);
    expect(run.code).toBe(0);
    expect(run.out).toBe(`capvault ${RELEASE} (state format ${STATE_FORMAT})\n`);
    expect((await runInProcess(["-V"])).out).toBe(run.out);
    expect(JSON.parse((await runInProcess(["--version", "--json"])).out)).toEqual({
      release: RELEASE,
      stateFormat: STATE_FORMAT,
    });
  });
});

describe("help", () => {
  it("top-level --help lists every command and the exit codes, exit 0", async () => {
    const run = await runInProcess(["--help"]);
    expect(run.code).toBe(0);
    for (const command of COMMANDS) expect(run.out).toContain(`  ${command.name}`);
    expect(run.out).toMatch(/Exit codes: 0 ok, 1 refused/);
  });

  it.each(COMMANDS.filter((c) => !c.passThrough).map((c) => c.name))(
    "%s --help prints its usage and options, exit 0, no request",
    async (name) => {
      const { fetch, calls } = fake(() => json(200, {}));
      const run = await runInProcess([name, CAP, "--help", "--bogus-flag"], { fetch });
      expect(run.code).toBe(0);
      expect(run.out).toContain(`Usage: capvault ${name}`);
      expect(run.out).toContain("--json");
      expect(calls).toHaveLength(0);
    },
  );

  it("`help ls` is the same as `ls --help`", async () => {
    expect((await runInProcess(["help", "ls"])).out).toBe((await runInProcess(["ls", "--help"])).out);
  });

  it("no command at all: help on stderr, exit 2", async () => {
    const run = await runInProcess([]);
    expect(run.code).toBe(2);
    expect(run.out).toBe("");
    expect(run.stderr).toContain("Commands:");
  });
});

describe("usage errors exit 2 and send nothing", () => {
  const cases: [string, string[], Record<string, string>, RegExp][] = [
    ["unknown command", ["frobnicate"], {}, /unknown command 'frobnicate'/],
    ["unknown option", ["ls", CAP, "--frob"], {}, /Unknown option '--frob'/],
    ["no cap", ["ls"], {}, /no cap: set CAPVAULT_CAP, use --cap-file PATH, or pass a cap URL as the first argument/],
    ["CAPVAULT_CAP not a cap URL", ["ls"], { CAPVAULT_CAP: "http://x/nope" }, /CAPVAULT_CAP is not a cap URL/],
    ["URL argument that is not a cap", ["ls", "http://x/other"], {}, /not a cap URL/],
    ["missing path", ["cat", CAP], {}, /missing PATH/],
    ["too many arguments", ["stat", CAP, "a", "b"], {}, /too many arguments/],
    ["mv needs two paths", ["mv", CAP, "a"], {}, /missing TO/],
    ["bad rights", ["share", CAP, "x", "--rights", "read,fly"], {}, /--rights takes/],
    ["repeated rights", ["share", CAP, "x", "--rights", "read,read"], {}, /--rights takes/],
    ["negative ttl", ["share", CAP, "x", "--ttl=-5"], {}, /--ttl takes a duration/],
    ["fractional ttl", ["share", CAP, "x", "--ttl", "1.5"], {}, /--ttl takes a duration/],
    ["ttl with an unknown unit", ["share", CAP, "x", "--ttl", "1y"], {}, /--ttl takes a duration/],
    [
      "mint ttl of zero minutes",
      ["mint", "p/", "--ttl", "0m"],
      { CAPVAULT_ADMIN_TOKEN: "t" },
      /--ttl takes a duration/,
    ],
    ["zero ttl", ["share", CAP, "x", "--ttl", "0"], {}, /--ttl takes a duration/],
    ["mint without admin token", ["mint", "p/"], {}, /no admin token: use --admin-token-file/],
    ["mint bad backend", ["mint", "p/", "--backend", "s3"], { CAPVAULT_ADMIN_TOKEN: "t" }, /--backend is r2 or disk/],
    ["mint without prefix", ["mint"], { CAPVAULT_ADMIN_TOKEN: "t" }, /missing PREFIX/],
    [
      "put of a missing local file",
      ["put", CAP, "/nonexistent/capvault-test-file", "dest"],
      {},
      /cannot read \/nonexistent\/capvault-test-file: ENOENT/,
    ],
    ["put of a folder without -r", ["put", CAP, "/tmp", "dest"], {}, /\/tmp is a folder: use -r/],
    ["put of stdin without REMOTE", ["put", CAP, "-"], {}, /put - \(stdin\) needs a REMOTE file path/],
    ["put of stdin to a folder", ["put", CAP, "-", "notes/"], {}, /needs a REMOTE file path/],
    ["get of the root without -r", ["get", CAP, "."], {}, /REMOTE names a folder: use get -r/],
    ["put -r with a single-file option", ["put", CAP, "-r", "cli", "-n"], {}, /--no-clobber applies to one file/],
    [
      "put --dry-run of one file",
      ["put", CAP, "package.json", "--dry-run"],
      {},
      /--dry-run applies to folders: add -r/,
    ],
    ["get --transfers of one file", ["get", CAP, "a.md", "--transfers", "2"], {}, /--transfers applies to folders/],
    ["cp -v of one file", ["cp", CAP, ":a.md", "/tmp/", "-v"], {}, /--verbose applies to folders/],
    ["get -r to stdout", ["get", CAP, "-r", "notes", "-"], {}, /get -r writes a folder/],
    ["cp with two local sides", ["cp", CAP, "a", "b"], {}, /one side must be remote, written :PATH/],
    ["cp with two remote sides", ["cp", CAP, ":a", ":b"], {}, /both sides are remote/],
    ["sync with two local sides", ["sync", CAP, "a", "b"], {}, /one side must be remote/],
    ["cp of a folder without -r", ["cp", CAP, "/tmp", ":x"], {}, /is a folder: use -r/],
    ["cp -r of a local file", ["cp", CAP, "-r", "package.json", ":x"], {}, /is not a folder/],
    ["transfers out of range", ["sync", CAP, "/tmp", ":x", "--transfers", "0"], {}, /--transfers takes/],
    ["cat --json", ["cat", CAP, "a", "--json"], {}, /--json does not apply/],
    ["revoke --child with a path-like id", ["revoke", CAP, "--child", ".."], {}, /--child takes a cap id/],
    ["no-clobber and if-none-match together", ["put", CAP, "-", "a", "-n", "--if-none-match", "*"], {}, /give one/],
  ];

  it.each(cases)("%s", async (_name, argv, env, message) => {
    const { fetch, calls } = fake(() => json(200, {}));
    const run = await runInProcess(argv, { env, fetch, stdin: "x" });
    expect(run.stderr).toMatch(message);
    expect(run.stderr).toMatch(/Try 'capvault( \w+)? --help'\./);
    expect(run.code).toBe(2);
    expect(calls).toHaveLength(0);
  });

  it("a cap URL typed where the command goes is not echoed back", async () => {
    const run = await runInProcess([CAP, "ls"]);
    expect(run.code).toBe(2);
    expect(run.stderr).not.toContain(TOKEN);
    expect(run.stderr).toContain("the command comes first");
  });

  it("a malformed CAPVAULT_CAP is not echoed back", async () => {
    const run = await runInProcess(["ls"], { env: { CAPVAULT_CAP: `http://x/objectz/${TOKEN}` } });
    expect(run.code).toBe(2);
    expect(run.stderr).not.toContain(TOKEN);
  });
});

describe("refusals and outages", () => {
  it("a CapError exits 1 with `capvault: <code>: <message>` on stderr", async () => {
    const { fetch, calls } = fake(() => json(400, { error: { code: "path_escapes", message: "path escapes" } }));
    const run = await runInProcess(["cat", CAP, "../../../etc/passwd"], { fetch });
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`${ARGUMENT_WARNING}capvault: path_escapes: path escapes\n`);
    expect(run.out).toBe("");
    expect(calls[0]!.url.searchParams.get("path")).toBe("../../../etc/passwd");
  });

  it("with --json the error is also one JSON document on stdout", async () => {
    const { fetch } = fake(() =>
      json(403, { error: { code: "forbidden", message: "capability lacks the right for this operation" } }),
    );
    const run = await runInProcess(["stat", CAP, "a", "--json"], { fetch });
    expect(run.code).toBe(1);
    expect(JSON.parse(run.out)).toEqual({
      error: { code: "forbidden", message: "capability lacks the right for this operation", status: 403 },
    });
  });

  it("an unreachable vault exits 3, without the token in the message", async () => {
    const fetch: FetchLike = async (input) => {
      throw new TypeError("fetch failed", { cause: new Error(`connect ECONNREFUSED for ${input}`) });
    };
    const run = await runInProcess(["info"], { fetch, env: { CAPVAULT_CAP: CAP } });
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/^capvault: unavailable: vault unreachable/);
    expect(run.stderr).not.toContain(TOKEN);
  });

  it("a non-vault answer (HTML 502) exits 3", async () => {
    const run = await runInProcess(["info", CAP], {
      fetch: async () => new Response("<h1>bad gateway</h1>", { status: 502 }),
    });
    expect(run.code).toBe(3);
    expect(run.stderr).toBe(`${ARGUMENT_WARNING}capvault: unavailable: unexpected response from vault (HTTP 502)\n`);
  });
});

describe("cap source", () => {
  it("the first positional is the cap when it is a cap URL; otherwise CAPVAULT_CAP is, and the positional is a path", async () => {
    const other = "http://other.test/object/" + "q".repeat(32);
    const { fetch, calls } = fake(() => json(200, { type: "dir" }));
    await runInProcess(["stat", CAP, "docs"], { fetch, env: { CAPVAULT_CAP: other } });
    await runInProcess(["stat", "docs"], { fetch, env: { CAPVAULT_CAP: other } });
    expect(calls.map((c) => `${c.url.origin}${c.url.pathname}?${c.url.searchParams}`)).toEqual([
      `http://vault.test/object/${TOKEN}/stat?path=docs`,
      `http://other.test/object/${"q".repeat(32)}/stat?path=docs`,
    ]);
  });

  it("`--` lets a path start with a dash", async () => {
    const { fetch, calls } = fake(() => new Response(null, { status: 204 }));
    const run = await runInProcess(["rm", CAP, "--", "-weird"], { fetch });
    expect(run.code).toBe(0);
    expect(calls[0]!.url.searchParams.get("path")).toBe("-weird");
  });
});

describe("output", () => {
  it("ls: names with / after folders; -l adds size and time; --json is one document", async () => {
    const entries = [
      { name: "a.txt", type: "file", size: 2048, etag: "e", modified: "2025-03-04T05:06:07.000Z" },
      { name: "sub", type: "dir" },
    ];
    const { fetch } = fake(() => json(200, { entries, cursor: null }));
    expect((await runInProcess(["ls", CAP], { fetch })).out).toBe("a.txt\nsub/\n");
    expect((await runInProcess(["ls", CAP, "-l"], { fetch })).out).toBe(
      "   2.0 KiB  2025-03-04 05:06  a.txt\n         -  -                 sub/\n",
    );
    expect(JSON.parse((await runInProcess(["ls", CAP, "--json"], { fetch })).out)).toEqual({ entries });
  });

  it("ls --json of an empty folder is still valid JSON", async () => {
    const { fetch } = fake(() => json(200, { entries: [], cursor: null }));
    expect(JSON.parse((await runInProcess(["ls", CAP, "--json"], { fetch })).out)).toEqual({ entries: [] });
  });

  it("share prints only the URL on stdout (for $(…)), details on stderr", async () => {
    const child = "c".repeat(32);
    const { fetch, calls } = fake(() =>
      json(201, { token: child, url: "ignored", id: "kid", rights: ["read"], expiresAt: null }),
    );
    const run = await runInProcess(
      ["share", CAP, "skills", "--rights", "list,read", "--ttl", "60", "--label", "agent"],
      { fetch },
    );
    expect(run.code).toBe(0);
    expect(run.out).toBe(`http://vault.test/object/${child}\n`);
    expect(run.stderr).toBe(`${ARGUMENT_WARNING}shared as kid: rights read, expires never\n`);
    expect(JSON.parse(String(calls[0]!.body))).toEqual({
      path: "skills",
      rights: ["read", "list"],
      ttlSeconds: 60,
      label: "agent",
    });
  });

  it("put from stdin sends the bytes with a guessed content type; --json prints the result", async () => {
    let sent: { type: string | null; body: string } | undefined;
    const fetch: FetchLike = async (input, init) => {
      const request = new Request(input, init);
      sent = { type: request.headers.get("content-type"), body: await request.text() };
      return json(201, { size: 5, etag: "e" });
    };
    const run = await runInProcess(["put", CAP, "-", "notes/a.md", "--json"], { fetch, stdin: "hello" });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.out)).toEqual({ path: "notes/a.md", created: true, size: 5, etag: "e" });
    expect(sent).toEqual({ type: "text/markdown; charset=utf-8", body: "hello" });
    const human = await runInProcess(["put", CAP, "-", "notes/a.md"], { fetch, stdin: "hello" });
    expect(human.out).toBe("created notes/a.md (5 B, etag e)\n");
  });

  it("a progress bar appears on a terminal for big transfers only, and never on stdout", async () => {
    const big = new Uint8Array(PROGRESS_THRESHOLD_BYTES + 1);
    const fetch: FetchLike = async () =>
      new Response(big, { headers: { "content-length": String(big.length), etag: '"e"' } });
    const tty = await runInProcess(["cat", CAP, "big.bin"], { fetch, tty: true });
    expect(tty.code).toBe(0);
    expect(tty.stdout.length).toBe(big.length);
    expect(tty.stderr).toContain("100%");
    const piped = await runInProcess(["cat", CAP, "big.bin"], { fetch, tty: false });
    expect(piped.stderr).toBe(ARGUMENT_WARNING);
    const small = await runInProcess(["cat", CAP, "small"], {
      fetch: async () => new Response("hi", { headers: { "content-length": "2", etag: '"e"' } }),
      tty: true,
    });
    expect(small.stderr).toBe(ARGUMENT_WARNING);
  });
});

describe("formatting", () => {
  it("sizes", () => {
    expect([0, 1023, 1024, 1536, 5 * 1024 ** 3].map(formatBytes)).toEqual([
      "0 B",
      "1023 B",
      "1.0 KiB",
      "1.5 KiB",
      "5.0 GiB",
    ]);
  });

  it("entries, stat and children", () => {
    expect(formatEntry({ name: "d", type: "dir" }, false)).toBe("d/\n");
    expect(formatStat({ type: "dir" })).toBe("type  dir\n");
    expect(
      formatStat({ type: "file", size: 3, etag: "e", modified: "2025-01-01T00:00:00.000Z", contentType: "text/plain" }),
    ).toBe(
      "type          file\nsize          3 (3 B)\netag          e\nmodified      2025-01-01 00:00\ncontent-type  text/plain\n",
    );
    expect(formatChildren([])).toBe("no child caps\n");
    expect(
      formatChildren([
        { id: "k1", label: null, path: "skills", rights: ["read", "list"], createdAt: "x", expiresAt: null },
      ]),
    ).toBe("ID  RIGHTS     EXPIRES  PATH    LABEL\nk1  read,list  never    skills\n");
  });

  it("progress line", () => {
    expect(renderProgress("f", 512, 1024)).toBe("f [############------------]  50%  512 B / 1.0 KiB");
    expect(renderProgress("f", 2048, 1024)).toContain("100%");
  });

  it("cap URLs are redacted from any message", () => {
    expect(redactCapUrls(`failed: ${CAP}/file?path=x and '${CAP}'`)).toBe(
      "failed: http://vault.test/object/…/file?path=x and 'http://vault.test/object/…'",
    );
  });
});
