/**
 * Builds the published package into dist/ (run by `npm pack` / `npm publish`
 * through prepack, or `npm run build:package` from the repository root):
 *
 * - dist/client.js: the SDK (capvault/client), one ES module for Node,
 *   Workers and browsers. Built for the neutral platform, so a `node:` import
 *   creeping into the SDK fails the build instead of failing in a browser.
 * - dist/cli.js: the `capvault` command (every command in cli/), one ES
 *   module for plain Node: no tsx at run time. `serve` is swapped for a note
 *   on where the vault runs (serve-elsewhere.ts).
 * - dist/types/: declarations of the SDK.
 *
 * Neither bundle may import a package: the published package has no
 * dependencies, and a bare import would break only after install. The one
 * package used, capnweb, is bundled in.
 */
import { execFileSync } from "node:child_process";
import { chmod, readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build, type Plugin } from "esbuild";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, "../..");
const DIST = path.join(HERE, "dist");

/** Fails on any import of a package (and on node: built-ins where `allowNode` is false). */
function selfContained(allowNode: boolean): Plugin {
  return {
    name: "self-contained",
    setup(b) {
      b.onResolve({ filter: /^[^./]/ }, (args) => {
        // capnweb (MIT, no dependencies of its own) is bundled in, for connect() and connectLive().
        if (args.path === "capnweb") return undefined;
        if (allowNode && args.path.startsWith("node:")) return { path: args.path, external: true };
        return { errors: [{ text: `${args.path}: the published package ships no dependencies` }] };
      });
    },
  };
}

/** `serve` needs Miniflare and the worker's sources: the package says where to run it instead. */
const serveElsewhere: Plugin = {
  name: "serve-elsewhere",
  setup(b) {
    b.onResolve({ filter: /\/launcher\/run-serve\.ts$/ }, () => ({ path: path.join(HERE, "serve-elsewhere.ts") }));
  },
};

await rm(DIST, { recursive: true, force: true });

await build({
  entryPoints: [path.join(ROOT, "clients/typescript/index.ts")],
  outfile: path.join(DIST, "client.js"),
  bundle: true,
  format: "esm",
  platform: "neutral",
  target: "es2022",
  plugins: [selfContained(false)],
  logLevel: "error",
});

await build({
  entryPoints: [path.join(ROOT, "cli/capvault.ts")],
  outfile: path.join(DIST, "cli.js"),
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node20",
  plugins: [serveElsewhere, selfContained(true)],
  logLevel: "error",
});
// The source's `#!/usr/bin/env -S npx tsx` becomes plain node.
const cli = path.join(DIST, "cli.js");
const code = await readFile(cli, "utf8");
await writeFile(cli, `#!/usr/bin/env node\n${code.replace(/^#!.*\n/, "")}`);
await chmod(cli, 0o755);

execFileSync(process.execPath, [path.join(ROOT, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"], {
  cwd: HERE,
  stdio: "inherit",
});
await fixDeclarations(path.join(DIST, "types"));

/**
 * tsc keeps the sources' `./x.ts` specifiers in declarations; the package
 * ships `x.d.ts`, found through `./x.js`. And no declaration may pull in
 * ambient types the consumer lacks.
 */
async function fixDeclarations(dir: string): Promise<void> {
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".d.ts")) continue;
    const file = path.join(entry.parentPath, entry.name);
    const text = await readFile(file, "utf8");
    if (/^\/\/\/ <reference types=/m.test(text)) throw new Error(`${file}: references ambient types`);
    await writeFile(file, text.replace(/(from\s+["']\.{1,2}\/[^"']+)\.ts(["'])/g, "$1.js$2"));
  }
}
