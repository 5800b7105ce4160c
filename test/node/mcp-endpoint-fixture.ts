import { randomUUID } from "node:crypto";
import { expect } from "vitest";
import { FsCap } from "../../clients/typescript/fs-cap.ts";
import { type SharedVault, sharedVault } from "./shared-vault.ts";
import { mintRoot } from "./test-vault.ts";

/** Every root the MCP endpoint files mint starts so: no answer may name it. */
const SECRET_PREFIX = "secret-prefix-xyz";

/** An MCP endpoint file's share of the node project's vault, and a full R2 root over a prefix of its own. */
export async function mcpEndpointVault(name: string): Promise<{ vault: SharedVault; fs: FsCap }> {
  const vault = await sharedVault(name);
  const prefix = `${SECRET_PREFIX}-${name}-${randomUUID()}/`;
  const fs = new FsCap((await mintRoot(vault, { backend: "r2", prefix, label: "mcp" })).url);
  return { vault, fs };
}

/** No response, description or instruction the file saw (at least `atLeast`) names the root prefix or a host path. */
export function expectNoPrefixOrHostPath(seen: string[], vault: SharedVault, atLeast: number): void {
  expect(seen.length).toBeGreaterThan(atLeast);
  for (const text of seen) {
    expect(text).not.toContain(SECRET_PREFIX);
    expect(text).not.toContain(vault.state);
    expect(text).not.toContain(vault.diskRoot);
    expect(text).not.toContain(vault.vaultDiskRoot);
  }
}
