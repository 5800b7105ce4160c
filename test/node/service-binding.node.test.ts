/**
 * The vault's real bundle (the launcher's build) beside a consumer Worker in
 * one Miniflare, bound as another team's Worker binds it (issue 35): the
 * consumer (test/fixtures/binding-consumer/worker.js) calls `env.VAULT`, the
 * CapVault entrypoint, and `env.NOTES`, a CapBinding whose props hold one cap.
 * Every call crosses a real service binding between two workers.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Miniflare, type WorkerOptions } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildWorker, PROJECT_ROOT } from "../../launcher/build-worker.ts";
import { readRuntimeConfig } from "../../launcher/runtime-config.ts";

const ORIGIN = "https://vault.test";
const ADMIN = randomBytes(24).toString("base64url");
let work: string;
let mf: Miniflare;
let vaultOptions: WorkerOptions;
let notesToken: string;

const consumer = (props: Record<string, unknown> | undefined): WorkerOptions => ({
  name: "consumer",
  modules: true,
  scriptPath: path.join(PROJECT_ROOT, "test/fixtures/binding-consumer/worker.js"),
  compatibilityDate: vaultOptions.compatibilityDate!,
  serviceBindings: {
    VAULT: { name: "capvault", entrypoint: "CapVault" },
    ...(props ? { NOTES: { name: "capvault", entrypoint: "CapBinding", props } } : {}),
  },
});

/** The vault's HTTP surface (the consumer is the entry worker). */
async function vaultFetch(route: string, init: RequestInit = {}): Promise<Response> {
  const vault = await mf.getWorker("capvault");
  return (await vault.fetch(`${ORIGIN}${route}`, init as never)) as unknown as Response;
}

async function mintRoot(prefix: string): Promise<{ token: string }> {
  const res = await vaultFetch("/admin/roots", {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
    body: JSON.stringify({ backend: "r2", prefix }),
  });
  expect(res.status).toBe(201);
  return (await res.json()) as { token: string };
}

/** A consumer route's JSON answer. */
async function consume<T = { ok: boolean; value?: unknown; message?: string }>(
  route: string,
  body: unknown,
): Promise<T> {
  const res = await mf.dispatchFetch(`http://consumer${route}`, { method: "POST", body: JSON.stringify(body) });
  return (await res.json()) as T;
}

const callOn = (token: string | undefined, method: string, ...args: unknown[]) =>
  consume("/call", { token, method, args });

beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), "capvault-binding-"));
  const scriptPath = await buildWorker(path.join(work, "build"));
  const runtime = readRuntimeConfig(path.join(PROJECT_ROOT, "wrangler.toml"));
  vaultOptions = {
    name: "capvault",
    modules: true,
    scriptPath,
    modulesRoot: path.dirname(scriptPath),
    compatibilityDate: runtime.compatibilityDate,
    compatibilityFlags: runtime.compatibilityFlags,
    durableObjects: {
      CAPS: { className: "CapObject", useSQLite: true },
      ROOTS: { className: "RootRegistry", useSQLite: true },
      JOURNALS: { className: "RootJournal", useSQLite: true },
      OAUTH: { className: "OAuthRegistry", useSQLite: true },
    },
    r2Buckets: ["BUCKET"],
    bindings: {
      CAPVAULT_ADMIN_TOKEN: ADMIN,
      CAPVAULT_TOKEN_KEY: randomBytes(32).toString("base64url"),
      CAPVAULT_PUBLIC_URL: ORIGIN,
    },
  };
  const persist = { durableObjectsPersist: path.join(work, "do"), r2Persist: path.join(work, "r2") };
  mf = new Miniflare({ ...persist, workers: [consumer(undefined), vaultOptions] });
  await mf.ready;
  // The props cap is fixed at deploy time: minted first, then the consumer deployed with it.
  notesToken = (await mintRoot("notes-binding/")).token;
  await mf.setOptions({ ...persist, workers: [consumer({ token: notesToken }), vaultOptions] });
}, 120_000);

afterAll(async () => {
  await mf?.dispose();
  await rm(work, { recursive: true, force: true });
});

describe("a consumer Worker over CapVault", () => {
  it("pipelines open, subdir and readText, and writes, lists and mints", async () => {
    const { token } = await mintRoot("chain/");
    expect(await callOn(token, "write", "notes/a.md", "alpha")).toMatchObject({ ok: true });
    expect(await consume("/chain", { token, path: "notes", file: "a.md" })).toEqual({ ok: true, value: "alpha" });
    const listed = await callOn(token, "list", "notes");
    expect((listed.value as { entries: { name: string }[] }).entries.map((e) => e.name)).toEqual(["a.md"]);
    const shared = await callOn(token, "share");
    expect((shared.value as { url: string }).url).toBe(`${ORIGIN}/object/${token}`);
  });

  it("refuses with HTTP's codes, and a dead token's answer is the same for every kind", async () => {
    const { token } = await mintRoot("refusals/");
    const http = async (route: string) =>
      ((await (await vaultFetch(`/object/${token}${route}`)).json()) as { error: { code: string } }).error.code;
    expect((await callOn(token, "readText", "../x")).message).toMatch(
      new RegExp(`^${await http("/file?path=../x")}: `),
    );
    expect((await callOn(token, "readText", "nope.md")).message).toMatch(
      new RegExp(`^${await http("/file?path=nope.md")}: `),
    );
    const forged = `${token.slice(0, -1)}${token.endsWith("a") ? "b" : "a"}`;
    const dead = new Set([
      (await callOn(forged, "info")).message,
      (await callOn("not-a-token", "info")).message,
      (await callOn(42 as unknown as string, "info")).message,
    ]);
    expect([...dead]).toEqual(["no_such_cap: no such capability"]);
  });

  it("a stub held across a revocation stops at its next call, and so does its child's", async () => {
    const { token } = await mintRoot("held/");
    await callOn(token, "write", "a.md", "one");
    const answer = await consume<Record<string, { ok: boolean; value?: unknown; message?: string }>>("/held", {
      token,
      file: "a.md",
    });
    expect(answer.before).toEqual({ ok: true, value: "one" });
    expect(answer.revoked).toMatchObject({ ok: true });
    expect(answer.after!.message).toMatch(/^no_such_cap: /);
    expect(answer.child!.message).toMatch(/^no_such_cap: /);
  });

  it("streams a write of a stated length and reads it back as a stream; a wrong length stores nothing", async () => {
    const { token } = await mintRoot("streams/");
    const size = 3 * 1024 * 1024 + 7;
    expect(await consume("/stream-write", { token, file: "big.bin", send: size, length: size })).toMatchObject({
      ok: true,
      value: { size },
    });
    const read = await mf.dispatchFetch("http://consumer/stream-read", {
      method: "POST",
      body: JSON.stringify({ token, file: "big.bin" }),
    });
    const bytes = new Uint8Array(await read.arrayBuffer());
    expect(bytes.length).toBe(size);
    expect(bytes.every((b) => b === 0x61)).toBe(true);
    for (const [file, send, length] of [
      ["short.bin", 1000, 1001],
      ["long.bin", 1001, 1000],
      ["none.bin", 1000, undefined],
    ] as const) {
      const answer = await consume("/stream-write", { token, file, send, length });
      expect(answer.ok, file).toBe(false);
      expect(answer.message, file).toMatch(/^[a-z_]+: /);
      expect((await callOn(token, "stat", file)).message, file).toMatch(/^not_found: /);
    }
  });
});

describe("a consumer Worker over CapBinding", () => {
  it("reaches the one cap its props name, and never holds a token", async () => {
    expect(await callOn(undefined, "write", "a.md", "from props")).toMatchObject({ ok: true });
    expect(await callOn(undefined, "readText", "a.md")).toEqual({ ok: true, value: "from props" });
    expect(await callOn(notesToken, "readText", "a.md")).toEqual({ ok: true, value: "from props" });
  });

  it("is cut off at its next call once its cap is revoked", async () => {
    const revoked = await vaultFetch(`/object/${notesToken}`, { method: "DELETE" });
    expect(revoked.status).toBe(204);
    expect((await callOn(undefined, "readText", "a.md")).message).toMatch(/^no_such_cap: /);
  });
});
