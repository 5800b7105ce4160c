import { randomUUID } from "node:crypto";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { inject } from "vitest";
import { mintRoot } from "./test-vault.ts";

/** What a file gets of the shared vault: the fields of a TestVault it may use. */
export interface SharedVault {
  url: string;
  adminToken: string;
  /** An R2 root over a prefix of this file's own. */
  rootCapUrl: string;
  /** A disk root over a folder of this file's own... */
  diskCapUrl: string;
  /** ...which is this host folder. */
  diskRoot: string;
  /** The vault's state folder and its whole disk folder (what no answer may name). */
  state: string;
  vaultDiskRoot: string;
}

/**
 * The node project's one vault (started by shared-vault-setup.ts), with an R2
 * and a disk root of this file's own, under a prefix no other file uses:
 * files run at once against it, so none may list, count or revoke what it did
 * not mint.
 */
export async function sharedVault(name: string): Promise<SharedVault> {
  const { url, adminToken, diskRoot, state } = inject("sharedVault");
  const prefix = `${name}-${randomUUID()}/`;
  const folder = path.join(diskRoot, prefix);
  await mkdir(folder, { recursive: true });
  const r2 = await mintRoot({ url, adminToken }, { backend: "r2", prefix, label: name });
  const disk = await mintRoot({ url, adminToken }, { backend: "disk", prefix, label: name });
  return {
    url,
    adminToken,
    rootCapUrl: r2.url,
    diskCapUrl: disk.url,
    diskRoot: folder,
    state,
    vaultDiskRoot: diskRoot,
  };
}

declare module "vitest" {
  export interface ProvidedContext {
    sharedVault: { url: string; adminToken: string; diskRoot: string; state: string };
  }
}
