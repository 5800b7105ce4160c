/**
 * The vault's real bundle (the launcher's build) beside a consumer Worker in
 * one Miniflare, bound as another team's Worker binds it (issue 35): the
 * consumer (test/fixtures/binding-consumer/worker.js) calls `env.VAULT`, the
 * CapVault entrypoint, and `env.NOTES`, a CapBinding whose props hold one cap.
 * Every call crosses a real service binding between two workers.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BindingPair, type Settled, startBindingPair } from "./binding-pair.ts";

let pair: BindingPair;
let notesToken: string;
const ORIGIN = "https://vault.test";
const vaultFetch = (route: string, init?: RequestInit) => pair.vaultFetch(route, init);
const mintRoot = (prefix: string) => pair.mintRoot(prefix);

/** A consumer route's JSON answer. */
async function consume<T = Settled & { value?: unknown; message?: string }>(route: string, body: unknown): Promise<T> {
  return (await (await pair.consume(route, body)).json()) as T;
}

const callOn = (token: string | undefined, method: string, ...args: unknown[]) =>
  consume("/call", { token, method, args });

beforeAll(async () => {
  pair = await startBindingPair();
  // The props cap is fixed at deploy time: minted first, then the consumer deployed with it.
  notesToken = (await mintRoot("notes-binding/")).token;
  await pair.bindNotes(notesToken);
}, 120_000);

afterAll(() => pair?.stop());

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
    const read = await pair.consume("/stream-read", { token, file: "big.bin" });
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
