/**
 * An Agents SDK workspace over a cap (issue 35, part 3): clients/agents-workspace's
 * CapWorkspace over the vault's own CapVault and CapBinding entrypoints (through
 * `ctx.exports`, real Workers RPC), driven by the real packages' code:
 * `@cloudflare/computer`'s `createAITools`, the tool set Think 0.23 builds from
 * `this.workspace` for every turn, and `@cloudflare/shell`'s
 * `createWorkspaceStateBackend`, codemode's `state.*` over a `WorkspaceFsLike`.
 * What lands is checked over HTTP, never through the adapter that wrote it.
 */

import { exports } from "cloudflare:workers";
import { type CreateAIToolsOptions, createAITools } from "@cloudflare/computer/tools/ai-sdk";
import { createWorkspaceStateBackend, type WorkspaceFsLike } from "@cloudflare/shell";
import type { Think, ThinkWorkspace } from "@cloudflare/think";
import type { ToolSet } from "ai";
import { describe, expect, it } from "vitest";
import { CapWorkspace, type VaultCap, WorkspaceFsError } from "../../clients/agents-workspace/index.ts";
import type { CapBinding, CapVault } from "../../worker/binding/entrypoints.ts";
import { cap, child, mintRoot } from "./vault.ts";

const vault = (exports as unknown as { CapVault: Service<CapVault> }).CapVault;
const binding = (token: string) =>
  (exports as unknown as { CapBinding: (o: { props: unknown }) => Service<CapBinding> }).CapBinding({
    props: { token },
  });
const fresh = (name: string) => `aw-${name}-${crypto.randomUUID()}/`;

/** A tool of the set run as the AI SDK runs a model's call: its `execute`, with the call's options. */
async function run(tools: ToolSet, name: string, input: Record<string, unknown>): Promise<Record<string, unknown>> {
  const tool = tools[name];
  if (!tool?.execute) throw new Error(`no tool ${name} in ${Object.keys(tools).join(", ")}`);
  const output = await tool.execute(input, { toolCallId: `call-${name}`, messages: [], context: {} });
  return output as Record<string, unknown>;
}

/** What a refused call threw: its Node code and message. */
async function refusal(call: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await call;
  } catch (error) {
    return { code: (error as { code?: string }).code ?? "(no code)", message: (error as Error).message };
  }
  return { code: "ok", message: "" };
}

async function httpText(token: string, path: string): Promise<string> {
  const res = await cap(token).read(path);
  return res.status === 200 ? res.text() : `(status ${res.status})`;
}

describe("the adapter's types are the packages' own", () => {
  it("satisfies shell's WorkspaceFsLike, Think's ThinkWorkspace and the tools' workspace, over both entrypoints", async () => {
    const root = await mintRoot(fresh("types"));
    // Both stubs are the structural VaultCap the client declares (tsc checks these assignments).
    const opened: VaultCap = vault.open(root.token);
    const bound: VaultCap = binding(root.token);
    const ws = new CapWorkspace(opened) satisfies WorkspaceFsLike & ThinkWorkspace & CreateAIToolsOptions["workspace"];
    const shell: WorkspaceFsLike = new CapWorkspace(bound);
    const think: ThinkWorkspace = CapWorkspace.perCall(() => vault.open(root.token), { mount: "/workspace" });
    await shell.writeFile("/a.md", "over CapBinding");
    expect(await ws.readFile("/a.md")).toBe("over CapBinding");
    expect(await think.fs.readFile("/workspace/a.md", "utf8")).toBe("over CapBinding");
  });

  it("is what `override workspace` in a Think subclass takes (checked by tsc, not run)", () => {
    // Think's field is typed ThinkWorkspace; this class compiles only if CapWorkspace is one.
    // Declared, not instantiated: a Think agent is a Durable Object class the pool's worker does not bind.
    const declareAgent = (Base: typeof Think, token: string) =>
      class VaultAgent extends Base {
        override workspace = CapWorkspace.perCall(() => vault.open(token), { mount: "/workspace" });
      };
    expect(typeof declareAgent).toBe("function");
  });
});

describe("Think's workspace tools (createAITools) through a cap", () => {
  it("writes, reads, edits, lists, finds, greps and deletes, and the files are the vault's", async () => {
    const root = await mintRoot(fresh("tools"));
    const ws = new CapWorkspace(vault.open(root.token), { mount: "/workspace" });
    const tools = createAITools({ workspace: ws });
    expect(Object.keys(tools).sort()).toEqual(["delete", "edit", "find", "grep", "ls", "read", "write"]);

    expect(
      await run(tools, "write", { path: "/workspace/notes/today.md", content: "alpha\nbeta\n" }),
    ).not.toHaveProperty("error");
    expect(await httpText(root.token, "notes/today.md")).toBe("alpha\nbeta\n");

    const read = await run(tools, "read", { path: "/workspace/notes/today.md" });
    expect(JSON.stringify(read)).toContain("beta");

    const edited = await run(tools, "edit", {
      path: "/workspace/notes/today.md",
      edits: [{ oldText: "beta", newText: "gamma" }],
    });
    expect(edited).not.toHaveProperty("error");
    expect(await httpText(root.token, "notes/today.md")).toBe("alpha\ngamma\n");

    await cap(root.token).write("notes/deep/b.ts", "const beta = 1;\n");
    await cap(root.token).write("top.txt", "gamma ray\n");
    const listed = (await run(tools, "ls", { path: "/workspace/notes" })) as { entries: { name: string }[] };
    expect(listed.entries.map((e) => e.name)).toEqual(["deep", "today.md"]);

    const found = (await run(tools, "find", { path: "/workspace", pattern: "**/*.ts" })) as {
      entries: { path: string }[];
    };
    expect(found.entries.map((e) => e.path)).toEqual(["/workspace/notes/deep/b.ts"]);

    const grepped = (await run(tools, "grep", { path: "/workspace", query: "gamma" })) as {
      matches: { path: string; line: number }[];
    };
    expect(grepped.matches.map((m) => `${m.path}:${m.line}`)).toEqual([
      "/workspace/notes/today.md:2",
      "/workspace/top.txt:1",
    ]);

    expect(await run(tools, "delete", { path: "/workspace/notes", recursive: true })).not.toHaveProperty("error");
    expect((await cap(root.token).read("notes/today.md")).status).toBe(404);
    expect((await cap(root.token).read("notes/deep/b.ts")).status).toBe(404);
    expect(await httpText(root.token, "top.txt")).toBe("gamma ray\n");
  });

  it("a read-only cap: reads work, every write is refused with EACCES (forbidden), and nothing is written", async () => {
    const root = await mintRoot(fresh("readonly"));
    await cap(root.token).write("keep.md", "original\n");
    const reader = await child(cap(root.token), { path: "", rights: ["read", "list"] });
    const tools = createAITools({ workspace: new CapWorkspace(binding(reader.token)) });

    expect(JSON.stringify(await run(tools, "read", { path: "/keep.md" }))).toContain("original");
    const attempts: [string, Record<string, unknown>][] = [
      ["write", { path: "/new.md", content: "x" }],
      ["write", { path: "/keep.md", content: "overwritten" }],
      ["edit", { path: "/keep.md", edits: [{ oldText: "original", newText: "changed" }] }],
      ["delete", { path: "/keep.md" }],
    ];
    for (const [name, input] of attempts) {
      const out = await run(tools, name, input);
      expect(`${name}: ${out.error}`).toMatch(new RegExp(`^${name}: EACCES: .*forbidden: `));
    }
    expect((await cap(root.token).read("new.md")).status).toBe(404);
    expect(await httpText(root.token, "keep.md")).toBe("original\n");
  });

  it("a revoked cap cuts the adapter off at its next call: EACCES carrying no_such_cap", async () => {
    const root = await mintRoot(fresh("revoke"));
    const agentCap = await child(cap(root.token), { path: "", rights: ["read", "write", "list", "delete"] });
    // One stub kept (CapVault.open) and one binding per call (CapBinding's props): both are cut off.
    for (const ws of [
      new CapWorkspace(vault.open(agentCap.token)),
      CapWorkspace.perCall(() => binding(agentCap.token)),
    ]) {
      const tools = createAITools({ workspace: ws });
      expect(await run(tools, "write", { path: "/a.md", content: "before" })).not.toHaveProperty("error");
    }
    expect(await httpText(root.token, "a.md")).toBe("before");
    const kept = new CapWorkspace(vault.open(agentCap.token));
    expect(await kept.readFile("/a.md")).toBe("before");
    expect((await agentCap.revoke()).status).toBe(204);

    const afterKept = await refusal(kept.readFile("/a.md"));
    expect(afterKept.code).toBe("EACCES");
    expect(afterKept.message).toContain("no_such_cap: ");
    const tools = createAITools({ workspace: CapWorkspace.perCall(() => binding(agentCap.token)) });
    const write = await run(tools, "write", { path: "/a.md", content: "after" });
    expect(String(write.error)).toMatch(/^EACCES: .*no_such_cap: /);
    // Not "File not found": the tools' store takes a message saying "no such" for a missing file.
    // (The read tool throws it; the AI SDK hands the model the message.)
    const read = await refusal(run(tools, "read", { path: "/a.md" }));
    expect(read).toEqual({ code: "EACCES", message: "EACCES: stat '/a.md' (no_such_cap: unknown capability)" });
    // A revoked cap is not an empty one: exists() throws rather than answering false.
    expect((await refusal(kept.exists("/a.md"))).code).toBe("EACCES");
    expect(await httpText(root.token, "a.md")).toBe("before");
  });
});

describe("shell's state backend (createWorkspaceStateBackend) through a cap", () => {
  it("writes, appends, replaces, globs, lists, copies, moves and removes in the vault", async () => {
    const root = await mintRoot(fresh("shell"));
    const state = createWorkspaceStateBackend(new CapWorkspace(vault.open(root.token)));
    await state.writeFile("/src/a.ts", "export const a = 1;\n");
    await state.writeFile("/src/lib/b.ts", "export const b = 2;\n");
    await state.writeJson("/config.json", { name: "demo" });
    await state.appendFile("/log.txt", "one\n");
    await state.appendFile("/log.txt", "two\n");
    expect(await httpText(root.token, "log.txt")).toBe("one\ntwo\n");
    expect(JSON.parse(await httpText(root.token, "config.json"))).toEqual({ name: "demo" });

    expect(await state.replaceInFile("/src/a.ts", "1", "42")).toMatchObject({ replaced: 1 });
    expect(await httpText(root.token, "src/a.ts")).toBe("export const a = 42;\n");

    expect(await state.glob("/src/**/*.ts")).toEqual(["/src/a.ts", "/src/lib/b.ts"]);
    expect(await state.glob("/*.json")).toEqual(["/config.json"]);
    expect(await state.readdir("/src")).toEqual(["a.ts", "lib"]);
    expect(await state.exists("/src/lib")).toBe(true);
    expect(await state.exists("/nope")).toBe(false);
    expect(await state.stat("/src/lib/b.ts")).toMatchObject({ type: "file", size: 20 });

    await state.cp("/src", "/copy", { recursive: true });
    expect(await httpText(root.token, "copy/lib/b.ts")).toBe("export const b = 2;\n");
    await state.mv("/copy/a.ts", "/moved.ts");
    expect(await httpText(root.token, "moved.ts")).toBe("export const a = 42;\n");
    expect((await cap(root.token).read("copy/a.ts")).status).toBe(404);

    await state.rm("/src", { recursive: true });
    expect((await cap(root.token).read("src/lib/b.ts")).status).toBe(404);
    expect(await httpText(root.token, "copy/lib/b.ts")).toBe("export const b = 2;\n");
  });
});

describe("what the vault refuses, as Node's codes", () => {
  it("maps each refusal to the code it implies, keeping the vault's words", async () => {
    const root = await mintRoot(fresh("errors"));
    await cap(root.token).write("dir/file.md", "x");
    const ws = new CapWorkspace(vault.open(root.token));
    expect(await ws.readFile("/missing.md")).toBeNull();
    expect(await ws.stat("/missing.md")).toBeNull();
    // Thunks: each call starts only when its answer is awaited.
    const cases: [string, () => Promise<unknown>, string][] = [
      ["stat of nothing", () => ws.fs.stat("/missing.md"), "ENOENT"],
      ["reading a folder", () => ws.fs.readFile("/dir", "utf8"), "EISDIR"],
      ["listing a file", () => ws.fs.readdir("/dir/file.md"), "ENOTDIR"],
      ["a folder where a file is", () => ws.mkdir("/dir/file.md", { recursive: true }), "EEXIST"],
      ["mkdir below nothing", () => ws.mkdir("/no/such", {}), "ENOENT"],
      ["an exclusive write onto a file", () => ws.fs.writeFile("/dir/file.md", "y", { exclusive: true }), "EEXIST"],
      ["rm of a full folder without recursive", () => ws.rm("/dir"), "ENOTEMPTY"],
      ["rm of nothing", () => ws.rm("/missing.md"), "ENOENT"],
      ["a path out of the cap", () => ws.readFileBytes("/../x"), "EINVAL"],
      ["a symlink", () => ws.symlink("/dir/file.md", "/link"), "ENOTSUP"],
      ["readlink", () => ws.readlink("/dir/file.md"), "ENOTSUP"],
    ];
    for (const [what, call, code] of cases) expect(`${what}: ${(await refusal(call())).code}`).toBe(`${what}: ${code}`);
    const escaped = await ws.readFileBytes("/../x").catch((error: unknown) => error);
    expect(escaped).toBeInstanceOf(WorkspaceFsError);
    expect(escaped).toMatchObject({ code: "EINVAL", vaultCode: "path_escapes", syscall: "open", path: "/../x" });
    expect((escaped as Error).message).toBe("EINVAL: open '/../x' (path_escapes: path escapes)");
    expect(await refusal(ws.rm("/missing.md", { force: true }))).toEqual({ code: "ok", message: "" });
    expect(await httpText(root.token, "dir/file.md")).toBe("x");
  });

  it("mkdir makes the vault's folder: an empty one is listed, over HTTP too; a read-only cap refuses it", async () => {
    const root = await mintRoot(fresh("mkdir"));
    const ws = new CapWorkspace(binding(root.token));
    await ws.mkdir("/a/b/c", { recursive: true });
    await ws.fs.mkdir("/a/d");
    expect(await ws.fs.stat("/a/b/c")).toMatchObject({ isDirectory: true });
    const listed = (await (await cap(root.token).list("a")).json()) as { entries: { name: string; type: string }[] };
    expect(listed.entries.map((e) => `${e.name}:${e.type}`).sort()).toEqual(["b:dir", "d:dir"]);
    expect((await refusal(ws.mkdir("/a/d"))).code).toBe("EEXIST");
    const reader = (await (await cap(root.token).subdir({ path: "", rights: ["read", "list"] })).json()) as {
      token: string;
    };
    expect((await refusal(new CapWorkspace(binding(reader.token)).mkdir("/e", { recursive: true }))).code).toBe(
      "EACCES",
    );
    expect((await cap(root.token).stat("e")).status).toBe(404);
  });

  it("bounds a recursive rm: past maxWalk files it is E2BIG and nothing is deleted", async () => {
    const root = await mintRoot(fresh("bound"));
    for (const name of ["a", "b", "c"]) await cap(root.token).write(`big/${name}.md`, name);
    const ws = new CapWorkspace(vault.open(root.token), { maxWalk: 2 });
    expect((await refusal(ws.rm("/big", { recursive: true }))).code).toBe("E2BIG");
    expect(await httpText(root.token, "big/c.md")).toBe("c");
    await new CapWorkspace(vault.open(root.token), { maxWalk: 3 }).rm("/big", { recursive: true });
    expect((await cap(root.token).read("big/a.md")).status).toBe(404);
  });

  it("an append that loses a race to another write is EAGAIN, and the other write is kept", async () => {
    const root = await mintRoot(fresh("append"));
    await cap(root.token).write("log.txt", "one\n");
    const stub = vault.open(root.token);
    // The same stub, with another writer's HTTP write landing between the append's read and its write.
    const racing: VaultCap = {
      read: async (path) => {
        const bytes = await stub.read(path);
        expect((await cap(root.token).write(path, "theirs\n")).status).toBe(200);
        return bytes;
      },
      readText: (path) => stub.readText(path),
      readStream: (path) => stub.readStream(path),
      write: (path, data, options) => stub.write(path, data, options),
      delete: (path) => stub.delete(path),
      move: (from, to, options) => stub.move(from, to, options),
      makeFolder: (path) => stub.makeFolder(path),
      stat: (path) => stub.stat(path),
      list: (path, options) => stub.list(path, options),
    };
    const lost = await refusal(new CapWorkspace(racing).appendFile("/log.txt", "two\n"));
    expect(lost.code).toBe("EAGAIN");
    expect(lost.message).toContain("precondition_failed: ");
    expect(await httpText(root.token, "log.txt")).toBe("theirs\n");
    await new CapWorkspace(stub).appendFile("/log.txt", "two\n");
    expect(await httpText(root.token, "log.txt")).toBe("theirs\ntwo\n");
  });

  it("writes a stream through fs.writeFile (buffered within maxBufferBytes, EFBIG past it)", async () => {
    const root = await mintRoot(fresh("stream"));
    const ws = new CapWorkspace(binding(root.token), { maxBufferBytes: 8 });
    const body = (text: string) => new Response(text).body as ReadableStream<Uint8Array>;
    await ws.fs.writeFile("/s.txt", body("streamed"));
    expect(await httpText(root.token, "s.txt")).toBe("streamed");
    expect((await refusal(ws.fs.writeFile("/big.txt", body("nine bytes")))).code).toBe("EFBIG");
    expect((await cap(root.token).read("big.txt")).status).toBe(404);
  });

  it("reads a byte window as the read tool asks for one, from the stream", async () => {
    const root = await mintRoot(fresh("window"));
    await cap(root.token).write("w.txt", "0123456789");
    const ws = new CapWorkspace(binding(root.token));
    expect(await ws.fs.readFile("/w.txt", { encoding: "utf8", byteOffset: 3, byteLength: 4 })).toBe("3456");
    expect(await new Response(await ws.fs.readFile("/w.txt", { byteOffset: 8 })).text()).toBe("89");
  });
});
