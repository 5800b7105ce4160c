import { env } from "cloudflare:test";
import { randomBytes } from "node:crypto";
import { expect } from "vitest";
import { digestToken, mintToken } from "../../shared/token.ts";
import { ADMIN, call } from "./vault.ts";

/** The admin side of export and import (docs/export-import.md), as the workers tests of both drive it. */

export const auth = { authorization: `Bearer ${ADMIN}` };

/** An admin GET that must answer 200, as JSON. */
export async function get(route: string): Promise<Record<string, unknown>> {
  const res = await call("GET", `/admin${route}`, { headers: auth });
  expect(res.status, route).toBe(200);
  return res.json() as Promise<Record<string, unknown>>;
}

export const post = (route: string, json: unknown) => call("POST", `/admin${route}`, { headers: auth, json });

/** A cap of an archive: a token this vault verifies, and the state its object would hold. */
export async function archivedCap(prefix: string, label: string) {
  const minted = await mintToken(env.CAPVAULT_TOKEN_KEY);
  if (!minted.ok) throw new Error("no token key");
  const { key, id } = await digestToken(minted.value);
  const record = {
    id,
    key,
    backend: "r2",
    root: [prefix],
    rights: ["read", "list"],
    label,
    createdAt: Date.now(),
    expiresAt: null,
    parent: null,
    depth: 0,
  };
  return { token: minted.value, state: { record, children: [], audit: [], holderMark: null } };
}

/** Opens an import of a new archive id (with the merge rule unless told otherwise). */
export async function begin(merge = true): Promise<string> {
  const archiveId = randomBytes(16).toString("hex");
  const fingerprint = ((await get("/state")) as { keyFingerprint: string }).keyFingerprint;
  const res = await post("/import/begin", { archiveId, keyFingerprint: fingerprint, merge });
  expect(res.status).toBe(200);
  return archiveId;
}

/** Commits an import, step by step, to its end. */
export async function finish(archiveId: string): Promise<void> {
  for (;;) {
    const res = await post("/import/commit", { archiveId });
    expect(res.status).toBe(200);
    if (((await res.json()) as { done: boolean }).done) return;
  }
}
