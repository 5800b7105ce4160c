/**
 * A cap over a service binding (issue 35): the vault's own `CapVault` and
 * `CapBinding` entrypoints, reached through `ctx.exports` (a real loopback
 * binding, so every call crosses Workers RPC). The two-worker Miniflare run,
 * the vault's real bundle beside a consumer: test/node/service-binding.node.test.ts.
 */
import { env, listDurableObjectIds } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { base32 } from "../../shared/token.ts";
import type { CapBinding, CapVault } from "../../worker/binding/entrypoints.ts";
import { setExpiry } from "./slow-upload.ts";
import { call, cap, errorCode, mintRoot } from "./vault.ts";

const vault = (exports as unknown as { CapVault: Service<CapVault> }).CapVault;
const binding = (token: unknown) =>
  (exports as unknown as { CapBinding: (o: { props: unknown }) => Service<CapBinding> }).CapBinding({
    props: { token },
  });
const fresh = (name: string) => `sb-${name}-${crypto.randomUUID()}/`;

/** The code a binding call was refused with (its message leads with it), or "ok". */
async function codeOf(call: Promise<unknown>): Promise<string> {
  try {
    await call;
    return "ok";
  } catch (error) {
    return /^([a-z_]+): /.exec((error as Error).message)?.[1] ?? `(not a refusal: ${(error as Error).message})`;
  }
}

describe("CapVault.open: a cap as a stub", () => {
  it("reads, writes, lists and mints through one pipelined chain", async () => {
    const root = await mintRoot(fresh("chain"));
    const c = vault.open(root.token);
    await c.write("notes/a.md", "alpha");
    // No await between: the child is minted and read from in one round trip.
    expect(
      await vault
        .open(root.token)
        .subdir("notes", { rights: ["read", "list"] })
        .readText("a.md"),
    ).toBe("alpha");
    const listed = await c.list("notes");
    expect(listed.entries.map((e) => e.name)).toEqual(["a.md"]);
    expect(await c.stat("notes/a.md")).toMatchObject({ type: "file", size: 5 });
    expect((await c.children()).children).toHaveLength(1);
    const shared = await c.share();
    expect(shared.url).toBe(`https://vault.test/object/${root.token}`);
  });

  it("refuses as HTTP does, with the same code, and changes nothing", async () => {
    const root = await mintRoot(fresh("parity"));
    await cap(root.token).write("a.md", "x");
    const reader = await vault
      .open(root.token)
      .subdir("", { rights: ["read"] })
      .share();
    const r = vault.open(reader.token);
    // Thunks: each call starts only when its answer is awaited (a rejection nobody awaits yet fails the run).
    const pairs: [string, () => Promise<unknown>, () => Promise<Response>][] = [
      ["a missing file", () => r.readText("nope.md"), () => cap(reader.token).read("nope.md")],
      ["a write without the right", () => r.write("b.md", "y"), () => cap(reader.token).write("b.md", "y")],
      ["a path out of the root", () => r.readText("../x"), () => cap(reader.token).read("../x")],
      ["an absolute path", () => r.readText("/etc/passwd"), () => cap(reader.token).read("/etc/passwd")],
      [
        "a reserved name",
        () => r.readText(".capvault-versions/x"),
        () => cap(reader.token).read(".capvault-versions/x"),
      ],
      [
        "a mint past its rights",
        () => r.subdir("", { rights: ["write"] }),
        () => cap(reader.token).subdir({ path: "", rights: ["write"] }),
      ],
    ];
    for (const [what, overBinding, overHttp] of pairs) {
      const [binding, http] = [await codeOf(overBinding()), await errorCode(await overHttp())];
      expect(`${what}: ${binding}`).toBe(`${what}: ${http}`);
    }
    expect(await codeOf(vault.open(root.token).stat("b.md"))).toBe("not_found");
  });

  it("answers a forged, an unknown, a revoked and an expired token alike, and a forged one addresses no object", async () => {
    const root = await mintRoot(fresh("dead"));
    const revoked = await vault
      .open(root.token)
      .subdir("", { rights: ["read"], ttlSeconds: null })
      .share();
    await cap(revoked.token).revoke();
    const expired = await vault
      .open(root.token)
      .subdir("", { rights: ["read"], ttlSeconds: null })
      .share();
    await setExpiry(expired.token, Date.now() - 1);
    const forged = base32(crypto.getRandomValues(new Uint8Array(30)));
    const unknown = `${root.token.slice(0, -1)}${root.token.endsWith("a") ? "b" : "a"}`;
    const messages = new Set<string>();
    const objects = async () => (await listDurableObjectIds(env.CAPS)).map(String).sort();
    const before = await objects();
    // A pipelined chain fails at its first refused call; that intermediate's promise is handled here too.
    const child = vault.open(forged).subdir("", { rights: ["read"] });
    const written = child.write("a.md", "x");
    expect(await codeOf(child)).toBe("no_such_cap");
    expect(await codeOf(written)).toBe("no_such_cap");
    expect(await objects()).toEqual(before);
    for (const token of [forged, unknown, revoked.token, expired.token, 42, null]) {
      try {
        await vault.open(token as string).readText("a.md");
        messages.add("ok");
      } catch (error) {
        messages.add((error as Error).message);
      }
    }
    expect([...messages]).toEqual(["no_such_cap: no such capability"]);
    // Refused before its arguments are looked at: a bad path does not tell a revoked token from a forged one.
    for (const token of [forged, revoked.token, expired.token])
      expect(await codeOf(vault.open(token).readText("../x" as string)), token).toBe("no_such_cap");
    // Every method, the stream ones too (found by the binding's fuzz, reliability/fuzz-binding.ts).
    for (const token of [forged, revoked.token]) {
      const dead = vault.open(token);
      expect(await codeOf(dead.list(7 as unknown as string)), token).toBe("no_such_cap");
      expect(await codeOf(dead.readStream(false as unknown as string)), token).toBe("no_such_cap");
      expect(await codeOf(dead.write("a", null as never, { length: [] } as never)), token).toBe("no_such_cap");
    }
  });

  it("a revocation stops the stubs already held, the cap's and its children's, at their next call", async () => {
    const root = await mintRoot(fresh("revoke"));
    const held = vault.open(root.token);
    await held.write("a.md", "one");
    const child = held.subdir("", { rights: ["read"] });
    expect(await child.readText("a.md")).toBe("one");
    expect((await held.revoke()).revoked).toBe(true);
    expect(await codeOf(held.readText("a.md"))).toBe("no_such_cap");
    expect(await codeOf(child.readText("a.md"))).toBe("no_such_cap");
    expect(await errorCode(await cap(root.token).info())).toBe("no_such_cap");
  });

  it("refuses a holder-bound cap as an unknown one: a binding call carries no proof of the key", async () => {
    const holder = { kty: "OKP", crv: "Ed25519", x: "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo" };
    const bound = await mintRoot(fresh("bound"), { holder });
    expect(await codeOf(vault.open(bound.token).info())).toBe("no_such_cap");
    expect(await codeOf(vault.open(bound.token).write("a.md", "x"))).toBe("no_such_cap");
  });
});

describe("CapVault.watch: a callback over the binding", () => {
  it("is called for each change inside the cap, not outside it, and once more at its end when the cap is revoked", async () => {
    const prefix = fresh("watch");
    const root = await mintRoot(prefix);
    await cap(root.token).write("inside/.keep", "");
    const inside = await vault.open(root.token).subdir("inside", { ttlSeconds: null }).share();
    const seen: { type: string; path?: string; operation?: string }[] = [];
    let wake = () => {};
    const next = () => new Promise<void>((resolve) => (wake = resolve));
    let arrived = next();
    await vault.open(inside.token).watch((message: { type: string; path?: string }) => {
      seen.push(message);
      wake();
    });
    await cap(inside.token).write("a.md", "x");
    await arrived;
    expect(seen[0]).toMatchObject({ type: "change", path: "a.md", operation: "created" });
    arrived = next();
    await cap(root.token).write("outside.md", "y");
    await cap(inside.token).write("b.md", "z");
    await arrived;
    expect(seen.map((m) => (m.type === "change" ? m.path : m.type))).toEqual(["a.md", "b.md"]);
    arrived = next();
    expect((await cap(inside.token).revoke()).status).toBe(204);
    await arrived;
    expect(seen.at(-1)).toMatchObject({ type: "end" });
  });
});

describe("CapVault streams: no whole file held", () => {
  // The pool's vault takes files up to 1 MiB (CAPVAULT_MAX_FILE_BYTES).
  const SIZE = 1024 * 1024;
  const bytes = () => {
    const out = new Uint8Array(SIZE);
    for (let i = 0; i < SIZE; i++) out[i] = (i * 7) & 0xff;
    return out;
  };
  const streamOf = (data: Uint8Array, piece = 64 * 1024) =>
    new ReadableStream<Uint8Array>({
      start(controller) {
        for (let at = 0; at < data.length; at += piece) controller.enqueue(data.slice(at, at + piece));
        controller.close();
      },
    });

  it("writes a stream of a stated length, and reads it back as a stream", async () => {
    const root = await mintRoot(fresh("stream"));
    const c = vault.open(root.token);
    const data = bytes();
    const written = await c.write("big.bin", streamOf(data), { length: SIZE, contentType: "application/x-test" });
    expect(written.size).toBe(SIZE);
    const read = new Uint8Array(await new Response(await c.readStream("big.bin")).arrayBuffer());
    expect(read.length).toBe(SIZE);
    expect(read.every((b, i) => b === data[i])).toBe(true);
    expect((await cap(root.token).stat("big.bin")).status).toBe(200);
  });

  it("refuses a stream without its length, or with a wrong one, and leaves no file", async () => {
    const root = await mintRoot(fresh("stream-bad"));
    const c = vault.open(root.token);
    expect(await codeOf(c.write("a.bin", streamOf(bytes())))).toBe("length_required");
    expect(await codeOf(c.write("b.bin", streamOf(bytes()), { length: SIZE + 1 }))).not.toBe("ok");
    expect(await codeOf(c.write("c.bin", streamOf(bytes()), { length: SIZE - 1 }))).not.toBe("ok");
    expect(await codeOf(c.write("d.bin", "four", { length: 5 }))).toBe("bad_request");
    expect(await codeOf(c.write("e.bin", streamOf(bytes()), { length: SIZE, colour: "red" } as never))).toBe(
      "bad_request",
    );
    for (const name of ["a.bin", "b.bin", "c.bin", "d.bin", "e.bin"])
      expect(await errorCode(await cap(root.token).stat(name)), name).toBe("not_found");
  });

  it("a stream one byte past the vault's file bound is refused whole", async () => {
    const root = await mintRoot(fresh("stream-max"));
    const over = new Uint8Array(SIZE + 1);
    expect(await codeOf(vault.open(root.token).write("over.bin", streamOf(over), { length: SIZE + 1 }))).toBe(
      "too_large",
    );
    expect(await errorCode(await cap(root.token).stat("over.bin"))).toBe("not_found");
  });
});

describe("CapBinding: one cap fixed by the binding's props", () => {
  it("serves the cap its props name, with no token in the caller's code", async () => {
    const root = await mintRoot(fresh("props"));
    await cap(root.token).write("notes/a.md", "from props");
    const notes = binding(root.token);
    expect(await notes.readText("notes/a.md")).toBe("from props");
    expect(await notes.subdir("notes", { rights: ["read"] }).readText("a.md")).toBe("from props");
    await notes.write("b.md", "written");
    expect(await (await cap(root.token).read("b.md")).text()).toBe("written");
  });

  it("refuses as HTTP does: escapes, rights, a read-only cap's writes", async () => {
    const root = await mintRoot(fresh("props-parity"));
    const reader = (await cap(root.token)
      .subdir({ path: "", rights: ["read"] })
      .then((r) => r.json())) as {
      token: string;
    };
    const ro = binding(reader.token);
    const pairs: [string, () => Promise<unknown>, () => Promise<Response>][] = [
      ["an escape", () => ro.readText("../x"), () => cap(reader.token).read("../x")],
      ["a write", () => ro.write("a.md", "x"), () => cap(reader.token).write("a.md", "x")],
      ["a delete", () => ro.delete("a.md"), () => cap(reader.token).remove("a.md")],
      [
        "a mint",
        () => ro.subdir("", { rights: ["read"] }),
        () => cap(reader.token).subdir({ path: "", rights: ["read"] }),
      ],
    ];
    for (const [what, overBinding, overHttp] of pairs)
      expect(`${what}: ${await codeOf(overBinding())}`).toBe(`${what}: ${await errorCode(await overHttp())}`);
    expect(await errorCode(await cap(root.token).stat("a.md"))).toBe("not_found");
  });

  it("props naming no cap, or a revoked one, answer no_such_cap on every call", async () => {
    const root = await mintRoot(fresh("props-dead"));
    const notes = binding(root.token);
    expect(await codeOf(notes.info())).toBe("ok");
    await cap(root.token).revoke();
    expect(await codeOf(notes.info())).toBe("no_such_cap");
    for (const props of [undefined, "", 7, { token: root.token }])
      expect(await codeOf(binding(props).readText("a.md"))).toBe("no_such_cap");
  });
});

it("the HTTP surface is unchanged beside the entrypoints", async () => {
  const root = await mintRoot(fresh("http"));
  expect((await call("GET", `/object/${root.token}`)).status).toBe(200);
});
