/**
 * The published package, as a user gets it: `npm pack` (which builds it),
 * installed from the tarball into an empty folder with no network, then used
 * there on plain Node (no tsx, nothing of the checkout on PATH): the
 * `capvault` binary (help, put and cat against a running vault), the SDK
 * from Node and from a Worker bundled with the Workers conditions and run in
 * Miniflare, its declarations under a strict consumer tsconfig, and the
 * stdio MCP bridge driven by the official MCP client, through a revocation.
 */
import { execFile, spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { build } from "esbuild";
import { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FsCap } from "../../clients/typescript/fs-cap.ts";
import { PROJECT_ROOT } from "../../launcher/build-worker.ts";
import { readRuntimeConfig } from "../../launcher/runtime-config.ts";
import { type SharedVault, sharedVault } from "./shared-vault.ts";

const run = promisify(execFile);
const PACKAGE_DIR = path.join(PROJECT_ROOT, "packages/capvault");

let vault: SharedVault;
let root: FsCap;
let tmp: string;
/** The empty folder the tarball is installed into. */
let consumer: string;
let tarballFiles: string[];
/** tsc over a consumer of the installed declarations, started as soon as the package is installed. */
let typecheck: Promise<{ code: number; stdout: string }>;

/** PATH without the checkout's node_modules/.bin, and no loader options: what a user's shell has. */
function userEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !/^(NODE_OPTIONS|npm_)/i.test(k)) env[k] = v;
  env.PATH = (process.env.PATH ?? "")
    .split(path.delimiter)
    .filter((p) => !p.startsWith(PROJECT_ROOT))
    .join(path.delimiter);
  return { ...env, ...extra };
}

async function packAndInstall(): Promise<void> {
  const packed = await run("npm", ["pack", "--json", "--pack-destination", tmp], { cwd: PACKAGE_DIR, env: userEnv() });
  const [info] = JSON.parse(packed.stdout) as { filename: string; files: { path: string }[] }[];
  tarballFiles = info!.files.map((f) => f.path);
  await writeFile(path.join(consumer, "package.json"), JSON.stringify({ name: "consumer", private: true }));
  await run(
    "npm",
    ["install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts", path.join(tmp, info!.filename)],
    { cwd: consumer, env: userEnv() },
  );
}

/** A strict consumer of `capvault/client`; the declarations themselves are checked too (skipLibCheck off). */
async function typecheckConsumer(): Promise<{ code: number; stdout: string }> {
  await writeFile(
    path.join(consumer, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        module: "nodenext",
        moduleResolution: "nodenext",
        target: "es2022",
        lib: ["es2022", "dom"],
        types: [],
        strict: true,
        noEmit: true,
        skipLibCheck: false,
      },
      files: ["use.mts"],
    }),
  );
  await writeFile(
    path.join(consumer, "use.mts"),
    'import { FsCap, type Stat } from "capvault/client";\n' +
      "const fs = new FsCap(String(process.env.CAPVAULT_CAP));\n" +
      'const stat: Stat = await fs.stat("x");\n' +
      'export const size: number = stat.type === "file" ? stat.size : 0;\n' +
      "// @ts-expect-error the SDK is typed: a number is not a path\n" +
      "await fs.readText(42);\n" +
      "declare const process: { env: Record<string, string | undefined> };\n",
  );
  const tsc = path.join(PROJECT_ROOT, "node_modules/typescript/bin/tsc");
  return run(process.execPath, [tsc, "-p", "."], { cwd: consumer, env: userEnv() }).then(
    (done) => ({ code: 0, stdout: done.stdout }),
    (failed: { code?: number; stdout?: string }) => ({ code: failed.code ?? 1, stdout: failed.stdout ?? "" }),
  );
}

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), "capvault-pkg-"));
  consumer = path.join(tmp, "consumer");
  await run("mkdir", [consumer]);
  // Its roots are minted while the package builds and its types are checked: they are independent.
  typecheck = packAndInstall().then(typecheckConsumer);
  [vault] = await Promise.all([sharedVault("npm-package"), typecheck]);
  root = new FsCap(vault.rootCapUrl);
}, 180_000);

afterAll(async () => {
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

/** `npx capvault` as a user types it (`--no`: never from the registry); the others run the installed bin directly. */
const npxCapvault = (args: string[]) =>
  run("npx", ["--no", "--", "capvault", ...args], { cwd: consumer, env: userEnv() });
const capvault = (args: string[], env: Record<string, string> = {}) =>
  run(path.join(consumer, "node_modules/.bin/capvault"), args, { cwd: consumer, env: userEnv(env) });

describe("the npm package", () => {
  it("ships built JavaScript, declarations and no sources", () => {
    expect(tarballFiles).toEqual(expect.arrayContaining(["package.json", "dist/cli.js", "dist/client.js"]));
    expect(tarballFiles).toContain("dist/types/clients/typescript/index.d.ts");
    expect(tarballFiles.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))).toEqual([]);
  });

  it("has no dependencies, and its binary runs on plain node", async () => {
    const manifest = JSON.parse(await readFile(path.join(consumer, "node_modules/capvault/package.json"), "utf8"));
    expect(manifest.dependencies ?? {}).toEqual({});
    const cli = await readFile(path.join(consumer, "node_modules/capvault/dist/cli.js"), "utf8");
    expect(cli.split("\n")[0]).toBe("#!/usr/bin/env node");
    const help = await npxCapvault(["--help"]);
    expect(help.stdout).toContain("Commands:");
    expect(help.stdout).toMatch(/^ {2}mcp /m);
  });

  it("puts and gets a file against a running vault", async () => {
    const file = path.join(tmp, "hello.md");
    await writeFile(file, "# from the package\n");
    await capvault(["put", file, "pkg/hello.md"], { CAPVAULT_CAP: vault.rootCapUrl });
    const cat = await capvault(["cat", "pkg/hello.md"], { CAPVAULT_CAP: vault.rootCapUrl });
    expect(cat.stdout).toBe("# from the package\n");
  });

  it("says where the vault runs instead of serving", async () => {
    const serve = capvault(["serve"]);
    await expect(serve).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining("npm start") });
  });

  it("imports capvault/client from Node", async () => {
    await root.write("pkg/node.txt", "read by node");
    const script =
      'import { FsCap, CapError } from "capvault/client";' +
      "const fs = new FsCap(process.env.CAPVAULT_CAP);" +
      'const text = await fs.readText("pkg/node.txt");' +
      'const refused = await fs.read("../x").catch((e) => e instanceof CapError && e.code);' +
      "console.log(JSON.stringify({ text, refused }));";
    const out = await run(process.execPath, ["--input-type=module", "-e", script], {
      cwd: consumer,
      env: userEnv({ CAPVAULT_CAP: vault.rootCapUrl }),
    });
    expect(JSON.parse(out.stdout)).toEqual({ text: "read by node", refused: "path_escapes" });
  });

  it("imports capvault/client from a Worker (Workers conditions, run in Miniflare)", async () => {
    await root.write("pkg/worker.txt", "read by a worker");
    const bundle = await build({
      stdin: {
        contents:
          'import { FsCap } from "capvault/client";' +
          "export default { async fetch(_request, env) {" +
          "  const fs = new FsCap(env.CAP);" +
          '  await fs.write("pkg/from-worker.txt", "written by a worker");' +
          '  return new Response(await fs.readText("pkg/worker.txt"));' +
          "} };",
        resolveDir: consumer,
        loader: "js",
      },
      bundle: true,
      write: false,
      format: "esm",
      platform: "neutral",
      conditions: ["workerd", "worker", "browser"],
      logLevel: "silent",
    });
    const mf = new Miniflare({
      modules: true,
      script: bundle.outputFiles[0]!.text,
      // The vault's own runtime date: a consumer worker built today.
      compatibilityDate: readRuntimeConfig(path.join(PROJECT_ROOT, "wrangler.toml")).compatibilityDate,
      bindings: { CAP: vault.rootCapUrl },
    });
    try {
      const response = await mf.dispatchFetch("http://worker.test/");
      expect(await response.text()).toBe("read by a worker");
    } finally {
      await mf.dispose();
    }
    expect(await root.readText("pkg/from-worker.txt")).toBe("written by a worker");
  });

  it("types capvault/client for a strict TypeScript consumer", async () => {
    const checked = await typecheck;
    expect(checked.stdout).toBe("");
    expect(checked.code).toBe(0);
  });
});

describe("the stdio MCP bridge from the installed package", () => {
  it("answers what it read and exits 0 when its stdin ends", async () => {
    const child = spawn(path.join(consumer, "node_modules/.bin/capvault"), ["mcp"], {
      cwd: consumer,
      env: userEnv({ CAPVAULT_CAP: vault.rootCapUrl }),
      stdio: ["pipe", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    child.stdin.end(`${JSON.stringify({ jsonrpc: "2.0", id: "p", method: "ping" })}\n`);
    expect(await exited).toBe(0);
    expect(JSON.parse(out)).toEqual({ jsonrpc: "2.0", id: "p", result: {} });
  });

  it("lists tools, writes and reads a file, and gets the vault's no_such_cap after revocation", async () => {
    const cap = await root.subdir({ path: "mcp-stdio", rights: ["read", "write", "list"] });
    const token = cap.url.split("/object/")[1]!;
    const transport = new StdioClientTransport({
      command: path.join(consumer, "node_modules/.bin/capvault"),
      args: ["mcp"],
      cwd: consumer,
      env: userEnv({ CAPVAULT_CAP: cap.url }),
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const client = new Client({ name: "stdio-test", version: "1.0.0" });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["read_file", "write_file", "list_directory"]));
      const written = await client.callTool({ name: "write_file", arguments: { path: "a.md", content: "# stdio" } });
      expect(written.isError).not.toBe(true);
      expect(await root.readText("mcp-stdio/a.md")).toBe("# stdio");
      const read = (await client.callTool({ name: "read_file", arguments: { path: "a.md" } })) as {
        content: { text: string }[];
      };
      expect(read.content[0]!.text).toBe("# stdio");

      await cap.revoke();
      const after = client.callTool({ name: "read_file", arguments: { path: "a.md" } });
      await expect(after).rejects.toMatchObject({ code: -32000, data: { code: "no_such_cap", status: 404 } });
      // Still connected: the next call gets the same answer, not a dead pipe.
      await expect(client.listTools()).rejects.toMatchObject({ data: { code: "no_such_cap" } });
    } finally {
      await client.close();
    }
    expect(stderr).not.toContain(token);
  });
});
