import { createHash, randomUUID } from "node:crypto";
import { inspect } from "node:util";
import { expect } from "vitest";
import { AdminClient, CapError, type FsCap } from "../../clients/typescript/index.ts";
import { type SharedVault, sharedVault } from "./shared-vault.ts";

export const md5 = (data: Uint8Array | string) => createHash("md5").update(data).digest("hex");
export const sha256 = (data: Uint8Array | string) => createHash("sha256").update(data).digest("hex");
export const token = (cap: FsCap) => cap.url.slice(cap.url.lastIndexOf("/") + 1);

/**
 * One SDK test file's vault: its share of the node project's vault and a
 * full root cap over a prefix of its own, plus every CapError the file saw
 * (checked at its end for leaked tokens). A fixture per file: the node
 * project shares modules across files (isolate: false).
 */
export interface SdkFixture {
  vault: SharedVault;
  fs: FsCap;
  /** A prefix no other file uses, for roots the file mints itself. */
  prefix: string;
  /** Awaits a call that must be refused and returns the CapError. */
  refusal(promise: Promise<unknown>): Promise<CapError>;
  /** No CapError seen so far names a token (and at least `atLeast` were seen). */
  expectNoTokenLeaked(atLeast: number): void;
}

export async function sdkFixture(name: string): Promise<SdkFixture> {
  const vault = await sharedVault(name);
  const prefix = `${name}-${randomUUID()}/`;
  const admin = new AdminClient(vault.url, vault.adminToken);
  const fs = await admin.mintRoot({ backend: "r2", prefix: `${prefix}sdk-test/`, label: "sdk" });
  const seenErrors: CapError[] = [];
  return {
    vault,
    fs,
    prefix,
    async refusal(promise) {
      const error = await promise.then(
        () => {
          throw new Error("expected a CapError, but the call succeeded");
        },
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(CapError);
      seenErrors.push(error as CapError);
      return error as CapError;
    },
    expectNoTokenLeaked(atLeast) {
      expect(seenErrors.length).toBeGreaterThan(atLeast);
      const secrets = [token(fs), vault.adminToken];
      for (const error of seenErrors) {
        // Any 32-character base32 run would be a token (ids are 16 characters).
        expect(error.message).not.toMatch(/[a-z2-7]{32}/);
        for (const secret of secrets) {
          expect(error.message).not.toContain(secret);
          expect(inspect(error)).not.toContain(secret);
          expect(JSON.stringify(error)).not.toContain(secret);
        }
      }
    },
  };
}
