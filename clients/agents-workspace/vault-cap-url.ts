import { isCapError } from "../typescript/cap-error.ts";
import { FsCap } from "../typescript/fs-cap.ts";
import type { CapOptions } from "../typescript/types.ts";
import type { VaultCap } from "./vault-cap.ts";

/**
 * A cap URL as the {@link VaultCap} a CapWorkspace takes, for an agent that
 * has no service binding to the vault (another account, another cloud, a
 * Node process): the HTTP SDK's `FsCap` underneath, so a holder-bound cap
 * works too (`{ holder }` signs each request with a DPoP proof), which the
 * bindings refuse (docs/workers.md). The SDK's refusals are `CapError`s with a
 * code; a binding's arrive as `code: text`, which is what the workspace reads,
 * so they are worded that way here, the vault's text unchanged.
 *
 * The URL is the cap's secret: pass it from the agent's own configuration,
 * never from what a model wrote.
 */
export function vaultCapOfUrl(cap: string | FsCap, options?: CapOptions): VaultCap {
  const fs = typeof cap === "string" ? new FsCap(cap, options) : cap;
  return {
    read: (path) => asBinding(() => fs.read(path)),
    readText: (path) => asBinding(() => fs.readText(path)),
    readStream: (path) =>
      asBinding(async () => {
        const file = await fs.readStream(path);
        // Only a conditional read answers "not modified", and this one is not conditional.
        if (file.notModified) throw new Error("not_found: nothing at that path");
        return file.body;
      }),
    write: (path, data, o) => asBinding(() => fs.write(path, data, o)),
    delete: (path) => asBinding(() => fs.delete(path)),
    move: (from, to, o) => asBinding(() => fs.move(from, to, o)),
    makeFolder: (path) => asBinding(() => fs.makeFolder(path)),
    stat: (path) => asBinding(() => fs.stat(path)),
    list: (path, o) => asBinding(() => fs.listPage(path, o)),
  };
}

/** Runs `call`, its refusal worded as a binding's: `code: text`. */
async function asBinding<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (isCapError(error)) throw new Error(`${error.code}: ${error.message}`);
    throw error;
  }
}
