import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makePythonVenv, PYTHON_PACKAGE, type PythonVenv, pythonEnv, run } from "./python-venv.ts";
import { startTestVault, type TestVault } from "./test-vault.ts";

let vault: TestVault;
let venv: PythonVenv;
let outside: string;
// The tests run from here, where no capvault/ folder can shadow the installed package.
const TESTS = path.join(PYTHON_PACKAGE, "tests");

beforeAll(async () => {
  [vault, venv] = await Promise.all([startTestVault(), makePythonVenv()]);
  // The disk fixture the Python suite expects: a skill inside the root, and a
  // symlink leading out of it to a file it must never read or change.
  outside = await mkdtemp(path.join(os.tmpdir(), "capvault-outside-"));
  await writeFile(path.join(outside, "passwd"), "root:x:0:0\n");
  await mkdir(path.join(vault.diskRoot, "skills/hermes-fs-as-cap"), { recursive: true });
  await writeFile(path.join(vault.diskRoot, "skills/hermes-fs-as-cap/SKILL.md"), "# hermes-fs-as-cap\n");
  await symlink(path.join(outside, "passwd"), path.join(vault.diskRoot, "symlink-to-outside"));
}, 300_000);
afterAll(async () => {
  await vault?.stop();
  await venv?.remove();
  if (outside) await rm(outside, { recursive: true, force: true });
});

/** Caps reach Python through the environment only: a command line is visible to every local user. */
function liveEnv(): NodeJS.ProcessEnv {
  return pythonEnv({
    CAPVAULT_TEST_CAP: vault.rootCapUrl,
    CAPVAULT_TEST_DISK_CAP: vault.diskCapUrl,
    CAPVAULT_TEST_DISK_ROOT: vault.diskRoot,
  });
}

describe("Python package (clients/python)", () => {
  it("pip installs into a fresh venv from local sources only, typed, with no dependencies", async () => {
    expect(venv.ok, venv.log).toBe(true);
    const probe = await run(
      venv.python,
      [
        "-c",
        "import capvault, capvault.hermes, importlib.metadata as m, json, os; print(json.dumps({" +
          "'file': capvault.__file__, 'requires': m.requires('capvault') or []," +
          "'typed': os.path.isfile(os.path.join(os.path.dirname(capvault.__file__), 'py.typed'))}))",
      ],
      { cwd: TESTS },
    );
    expect(probe.status, probe.output).toBe(0);
    const found = JSON.parse(probe.stdout) as { file: string; requires: string[]; typed: boolean };
    expect(found.file.startsWith(path.join(venv.dir, "venv"))).toBe(true);
    expect(found.requires).toEqual([]);
    expect(found.typed).toBe(true);
  });

  it("passes its suite from the installed package against the live vault, R2 and disk, the Hermes vector first", async () => {
    expect(venv.ok, venv.log).toBe(true);
    const suite = await run(venv.python, ["-m", "unittest", "-v", "test_capvault"], { cwd: TESTS, env: liveEnv() });
    expect(suite.status, suite.output).toBe(0);
    expect(suite.output).toMatch(/^OK$/m);
    expect(suite.output).not.toMatch(/skipped/);
    expect(/^(\w+) \(.*\) \.\.\. /m.exec(suite.output)?.[1]).toBe("test_hermes_fs_as_cap_vector");
    expect(await readFile(path.join(outside, "passwd"), "utf8")).toBe("root:x:0:0\n");
  }, 300_000);

  it("Hermes bisimulation: status quo and cap agree on benign sequences; only the status quo leaks", async () => {
    expect(venv.ok, venv.log).toBe(true);
    const bisim = await run(venv.python, ["-m", "unittest", "-v", "test_hermes_bisim"], { cwd: TESTS, env: liveEnv() });
    console.log(bisim.stdout); // the seed and both sides' scorecard
    expect(bisim.status, bisim.output).toBe(0);
    expect(bisim.output).toMatch(/^OK$/m);
    expect(bisim.output).not.toMatch(/skipped/);
    const benign = /^benign: (\d+) sequences, \d+ calls: identical I\/O and folders in (\d+)\/\d+$/m.exec(bisim.stdout);
    expect(benign, bisim.stdout).not.toBeNull();
    if (!process.env.CAPVAULT_BISIM_SEQUENCES) expect(Number(benign![1])).toBeGreaterThanOrEqual(200);
    expect(benign![2]).toBe(benign![1]);
    expect(bisim.stdout).toMatch(/^score: \(a\) status quo leaked [1-9]\d*\/(\d+), \(b\) cap leaked 0\/\1$/m);
  }, 300_000);

  it("Hermes plugin: Hermes' own test vectors pass through the cap-backed tools, on disk and R2", async () => {
    expect(venv.ok, venv.log).toBe(true);
    const plugin = await run(venv.python, ["-m", "unittest", "-v", "test_hermes_plugin"], {
      cwd: TESTS,
      env: liveEnv(),
    });
    expect(plugin.status, plugin.output).toBe(0);
    expect(plugin.output).toMatch(/^OK$/m);
    expect(plugin.output).not.toMatch(/skipped/);
    expect(plugin.output).toMatch(/^test_the_package_declares_the_hermes_entry_point .* \.\.\. ok$/m);
    expect(await readFile(path.join(outside, "passwd"), "utf8")).toBe("root:x:0:0\n");
  }, 300_000);
});
