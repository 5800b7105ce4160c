/**
 * `npm run conformance`: the official MCP conformance suite's server
 * scenarios that apply to any server, run against a cap's `/mcp` on a real
 * vault (the launcher, as the node tests start it), at both protocol eras.
 * Prints a pass/fail table; exits non-zero when a check fails that
 * expected-failures.json does not list, with its reason, for that scenario.
 *
 * The suite runs under this script's own Node: the project's (22 or later,
 * see docs/toolchain.md), which the suite needs (`fs.globSync`).
 */
import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { PROJECT_ROOT } from "../../launcher/build-worker.ts";
import { startTestVault } from "../node/test-vault.ts";

const run = promisify(execFile);
const SUITE = path.join(PROJECT_ROOT, "node_modules/@modelcontextprotocol/conformance/dist/index.js");

/** The Skills extension's (SEP-2640) scenarios. */
const SKILL_SCENARIOS = ["sep-2640-skills-directory", "sep-2640-skills-enumeration", "sep-2640-skills-manifest"];

/** The scenarios that need nothing of a server but MCP itself, per spec version. */
export const SCENARIOS: Record<string, readonly string[]> = {
  "2025-11-25": [
    "server-initialize",
    "ping",
    "tools-list",
    "dns-rebinding-protection",
    "server-sse-multiple-streams",
    "resources-list",
  ],
  "2026-07-28": [
    "tools-list",
    "dns-rebinding-protection",
    "server-sse-multiple-streams",
    "resources-list",
    "caching",
    "http-header-validation",
    "sep-2164-resource-not-found",
    "server-stateless",
  ],
  // Extension scenarios stand outside the spec timeline: the suite runs them, at 2026-07-28, only without
  // --spec-version; "extension@<version>" runs them at that version with --force.
  extension: SKILL_SCENARIOS,
  "extension@2025-11-25": SKILL_SCENARIOS,
};

interface Outcome {
  version: string;
  scenario: string;
  passed: boolean;
  failures: string[];
}

/** Per version and scenario, the checks expected to fail, each with its reason. */
type Expected = { [version: string]: { [scenario: string]: { [check: string]: string } } };

async function scenario(
  node: string,
  url: string,
  version: string,
  name: string,
  expected: Expected,
): Promise<Outcome> {
  const out = await mkdtemp(path.join(os.tmpdir(), "capvault-conformance-"));
  try {
    const [kind, at] = version.split("@");
    const pinned = kind !== "extension" ? ["--spec-version", version] : at ? ["--spec-version", at, "--force"] : [];
    const args = [SUITE, "server", "--url", url, ...pinned, "--scenario", name, "-o", out];
    const result = await run(node, args, { maxBuffer: 16 * 1024 * 1024 }).catch(
      (error: { stdout?: string; stderr?: string }) => ({ stdout: error.stdout ?? "", stderr: error.stderr ?? "" }),
    );
    const checks = await readChecks(out);
    const failed = checks.filter((c) => c.status === "FAILURE");
    const failures = failed.map((c) => `${c.id}: ${c.errorMessage ?? "failed"}`.slice(0, 200));
    if (checks.length === 0) failures.push(`no checks recorded: ${`${result.stdout}${result.stderr}`.slice(-300)}`);
    // A scenario that skipped every check (an extension the server does not declare) tested nothing.
    const allSkipped = checks.length > 0 && checks.every((c) => c.status === "SKIPPED");
    if (allSkipped) failures.push(`every check skipped: ${checks[0]?.errorMessage ?? ""}`.slice(0, 200));
    const listed = expected[version]?.[name] ?? {};
    const unexpected = failed.filter((c) => !(c.id in listed)).length + (checks.length === 0 || allSkipped ? 1 : 0);
    const excused = failed.filter((c) => c.id in listed).map((c) => `${c.id} (expected: ${listed[c.id]})`);
    return { version, scenario: name, passed: unexpected === 0, failures: unexpected === 0 ? excused : failures };
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}

async function readChecks(dir: string): Promise<Check[]> {
  const checks: Check[] = [];
  for (const entry of await readdir(dir, { recursive: true })) {
    if (!entry.endsWith("checks.json")) continue;
    checks.push(...(JSON.parse(await readFile(path.join(dir, entry), "utf8")) as Check[]));
  }
  return checks;
}

async function main(): Promise<number> {
  const node = process.execPath;
  const expected = JSON.parse(
    await readFile(path.join(import.meta.dirname, "expected-failures.json"), "utf8"),
  ) as Expected;
  const vault = await startTestVault();
  try {
    const cap = new URL(vault.rootCapUrl);
    // The dns-rebinding scenario wants a localhost URL (its requests name evil.example.com instead).
    const url = `http://localhost:${cap.port}${cap.pathname}/mcp`;
    await seed(vault.rootCapUrl);
    const outcomes: Outcome[] = [];
    // `npm run conformance -- <scenario>…` runs only those.
    const only = process.argv.slice(2);
    for (const [version, names] of Object.entries(SCENARIOS)) {
      for (const name of names) {
        if (only.length === 0 || only.includes(name)) outcomes.push(await scenario(node, url, version, name, expected));
      }
    }
    console.log(`\n${"version".padEnd(21)} ${"scenario".padEnd(32)} result`);
    for (const o of outcomes) {
      console.log(`${o.version.padEnd(21)} ${o.scenario.padEnd(32)} ${o.passed ? "PASS" : "FAIL"}`);
      for (const f of o.failures) console.log(`${"".padEnd(54)}${f}`);
    }
    const unexpected = outcomes.filter((o) => !o.passed).length;
    const passed = outcomes.filter((o) => o.passed).length;
    console.log(`\n${passed} of ${outcomes.length} scenarios pass (expected failures of single checks listed above)`);
    return unexpected === 0 ? 0 : 1;
  } finally {
    await vault.stop();
  }
}

/** A file and a skill (with a folder of its own) in the cap, so resources and skills have something to list. */
async function seed(capUrl: string): Promise<void> {
  const files: Record<string, string> = {
    "notes/readme.md": "# notes\n",
    "skills/conformance-demo/SKILL.md":
      "---\nname: conformance-demo\ndescription: A skill the conformance run lists.\n---\n\n# Demo\n",
    // A folder inside the skill, for the directory-read scenario's inode/directory child.
    "skills/conformance-demo/references/GUIDE.md": "# Guide\n",
  };
  for (const [file, text] of Object.entries(files)) {
    const response = await fetch(`${capUrl}/file?path=${encodeURIComponent(file)}`, { method: "PUT", body: text });
    if (!response.ok) throw new Error(`seeding ${file}: ${response.status}`);
  }
}

process.exitCode = await main();
