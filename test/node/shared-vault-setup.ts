import type { TestProject } from "vitest/node";
import { startTestVault } from "./test-vault.ts";

/**
 * The node project's globalSetup: ONE vault for every file that only needs
 * "a vault" (test/node/shared-vault.ts), since each vault start costs seconds
 * of CPU on a loaded machine. Files that restart the vault, set its config,
 * read its log or own all its roots still start their own.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const vault = await startTestVault();
  const { url, adminToken, diskRoot, state } = vault;
  project.provide("sharedVault", { url, adminToken, diskRoot, state });
  return () => vault.stop();
}
