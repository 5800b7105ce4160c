import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../../launcher/build-worker.ts";
import { startTestVault, type TestVault } from "./test-vault.ts";

let vault: TestVault;
let outside: string;

beforeAll(async () => {
  vault = await startTestVault();
  // The disk fixture the Python suite expects: a skill inside the root, and a
  // symlink leading out of it to a file it must never read or change.
  outside = await mkdtemp(path.join(os.tmpdir(), "capvault-outside-"));
  await writeFile(path.join(outside, "passwd"), "root:x:0:0\n");
  await mkdir(path.join(vault.diskRoot, "skills/hermes-fs-as-cap"), { recursive: true });
  await writeFile(path.join(vault.diskRoot, "skills/hermes-fs-as-cap/SKILL.md"), "# hermes-fs-as-cap\n");
  await symlink(path.join(outside, "passwd"), path.join(vault.diskRoot, "symlink-to-outside"));
});
afterAll(async () => {
  await vault?.stop();
});

describe("Python client (clients/python, stdlib unittest)", () => {
  it("passes its suite against the live vault, R2 and disk, with nothing skipped", async () => {
    const run = spawnSync("python3", ["-m", "unittest", "-v", "test_capvault"], {
      cwd: path.join(PROJECT_ROOT, "clients/python"),
      env: {
        ...process.env,
        CAPVAULT_TEST_CAP: vault.rootCapUrl,
        CAPVAULT_TEST_DISK_CAP: vault.diskCapUrl,
        PYTHONDONTWRITEBYTECODE: "1",
      },
      encoding: "utf8",
      timeout: 120_000,
    });
    const report = `${run.stdout}\n${run.stderr}`;
    expect(run.status, report).toBe(0);
    expect(report).toMatch(/^OK$/m);
    expect(report).not.toMatch(/skipped/);
    expect(report).toMatch(/test_hermes_fs_as_cap_vector/);
    expect(await readFile(path.join(outside, "passwd"), "utf8")).toBe("root:x:0:0\n");
  }, 150_000);
});
