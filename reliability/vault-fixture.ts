import { randomBytes } from "node:crypto";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Backend } from "../shared/wire-types.ts";
import { startTestVault, type TestVault, type TestVaultOptions } from "../test/node/test-vault.ts";
import { call as callOnce, json, type Observed, text } from "./http-call.ts";

/**
 * Setup and health checks are not the fuzz: a request whose pooled
 * connection was closed under it (see http-keepalive.ts) never reached the
 * vault, so it is sent once more.
 */
export async function call(url: string, init?: RequestInit): Promise<Observed> {
  const first = await callOnce(url, init);
  return first.status === 0 && !(init?.body instanceof ReadableStream) ? callOnce(url, init) : first;
}

export const BACKENDS: readonly Backend[] = ["r2", "disk"];

/** A root minted for the run, with the prefix only the test knows. */
export interface RootCap {
  backend: Backend;
  url: string;
  token: string;
  prefix: string;
}

/**
 * The real launcher on fresh temp state, plus what the leak checks need:
 * roots under a distinctive prefix per backend, a sibling root next to each
 * (the `/tmp/allow_dir` vs `/tmp/allow_dir_evil` shape) holding a canary
 * file, a canary on the host outside the disk base, and symlinks inside the
 * disk root that point at both. No response may ever show the prefix, a host
 * path or the canary.
 */
export interface Fixture {
  vault: TestVault;
  roots: Record<Backend, RootCap>;
  siblings: Record<Backend, RootCap>;
  canary: string;
  /** Strings that must appear in no response body or header. */
  secrets: string[];
  /** Names planted in each root: fuzzed paths pick them so reads meet real files and links. */
  plantedNames: string[];
}

export async function openFixture(options: TestVaultOptions = {}): Promise<Fixture> {
  const vault = await startTestVault(options);
  try {
    return await plant(vault);
  } catch (error) {
    await vault.stop();
    throw error;
  }
}

async function plant(vault: TestVault): Promise<Fixture> {
  const marker = randomBytes(6).toString("hex");
  const prefix = `rlbprefix${marker}`;
  const canary = `RLBCANARY${randomBytes(8).toString("hex")}`;
  const roots = {} as Record<Backend, RootCap>;
  const siblings = {} as Record<Backend, RootCap>;
  for (const backend of BACKENDS) {
    roots[backend] = await mintRoot(vault, backend, `${prefix}/`);
    siblings[backend] = await mintRoot(vault, backend, `${prefix}-sibling/`);
    await put(siblings[backend].url, "canary.txt", canary);
    await put(roots[backend].url, "a.txt", "plain seed content\n");
    await put(roots[backend].url, "dir/b.txt", "nested seed content\n");
  }
  await put(vault.rootCapUrl, "canary.txt", canary);
  // Host-side traps for the disk root: a canary outside the disk base and links leading out of the cap's folder.
  const base = path.dirname(vault.diskRoot);
  const outside = path.join(base, "outside-canary.txt");
  await writeFile(outside, canary);
  const diskFolder = path.join(vault.diskRoot, prefix);
  await mkdir(diskFolder, { recursive: true });
  await symlink(`../${prefix}-sibling/canary.txt`, path.join(diskFolder, "link-sibling"));
  await symlink(`../${prefix}-sibling`, path.join(diskFolder, "link-dir"));
  await symlink(outside, path.join(diskFolder, "link-abs"));
  await symlink("..", path.join(diskFolder, "link-up"));
  return {
    vault,
    roots,
    siblings,
    canary,
    secrets: [prefix, marker, base, vault.diskRoot, vault.state, canary],
    plantedNames: [
      "a.txt",
      "dir",
      "dir/b.txt",
      "link-sibling",
      "link-dir",
      "link-abs",
      "link-up",
      "link-dir/canary.txt",
      "link-up/x",
    ],
  };
}

export async function mintRoot(
  vault: TestVault,
  backend: Backend,
  prefix: string,
  label = "reliability",
): Promise<RootCap> {
  const response = await call(`${vault.url}/admin/roots`, {
    method: "POST",
    headers: { authorization: `Bearer ${vault.adminToken}`, "content-type": "application/json" },
    body: JSON.stringify({ backend, prefix, label }),
  });
  const body = json(response) as { url?: string; token?: string } | undefined;
  if (response.status !== 201 || !body?.url || !body.token)
    throw new Error(`minting a ${backend} root failed: ${response.status} ${text(response)}`);
  return { backend, url: body.url, token: body.token, prefix };
}

export async function put(
  capUrl: string,
  file: string,
  content: string | Uint8Array,
  headers: Record<string, string> = {},
): Promise<void> {
  const response = await call(`${capUrl}/file?path=${encodeURIComponent(file)}`, {
    method: "PUT",
    body: content,
    headers,
  });
  if (response.status !== 200 && response.status !== 201)
    throw new Error(`PUT ${file} failed: ${response.status} ${text(response)}`);
}

/** A child cap of `capUrl`; throws when the vault refuses (setup, not a check). */
export async function subdir(
  capUrl: string,
  body: Record<string, unknown>,
): Promise<{ url: string; token: string; id: string }> {
  const response = await call(`${capUrl}/subdir`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const minted = json(response) as { url?: string; token?: string; id?: string } | undefined;
  if (response.status !== 201 || !minted?.url || !minted.token || !minted.id)
    throw new Error(`subdir failed: ${response.status} ${text(response)}`);
  return { url: minted.url, token: minted.token, id: minted.id };
}
