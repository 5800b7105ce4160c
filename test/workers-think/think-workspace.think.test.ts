/**
 * A real Think agent (issue 35, part 3) whose `workspace` is a cap: Think's
 * own turn loop builds its own workspace tools from `this.workspace` and runs
 * each call the (scripted) model makes, through CapWorkspace and the vault's
 * CapVault entrypoint. What lands is checked over HTTP, never through the
 * agent. The agent is test/workers-think/think-agent.ts.
 */
import { env } from "cloudflare:workers";
import { getAgentByName } from "agents";
import { describe, expect, it } from "vitest";
import { cap, child, mintRoot } from "../workers/vault.ts";
import type { ScriptedThinkAgent, ScriptStep, ThinkTurns, ToolResult } from "./think-agent.ts";

const agents = (env as unknown as { THINK: DurableObjectNamespace<ScriptedThinkAgent> }).THINK;
// (A Think class is too deep for the stub's mapped type: the test names the one method it calls.)
const newAgent = async () => (await getAgentByName(agents, crypto.randomUUID())) as unknown as ThinkTurns;
const fresh = (name: string) => `think-${name}-${crypto.randomUUID()}/`;
const calls = (...tools: [string, Record<string, unknown>][]): ScriptStep[] => [
  ...tools.map(([name, input]) => ({ tools: [{ name, input }] })),
  { text: "done" },
];

/** A tool's failure as the model saw it: Think's thrown tool error, or the tool's own `{ error }` answer. */
const failure = (r: ToolResult | undefined) =>
  r?.error ?? ((r?.output as { error?: string } | undefined)?.error as string | undefined);

async function httpText(token: string, path: string): Promise<string> {
  const res = await cap(token).read(path);
  return res.status === 200 ? res.text() : `(status ${res.status})`;
}

describe("a Think agent whose workspace is a cap", () => {
  it("runs Think's own tools through the cap: write, read, edit, ls, find, grep and delete", async () => {
    const root = await mintRoot(fresh("tools"));
    await cap(root.token).write("top.txt", "gamma ray\n");
    const agent = await newAgent();
    const turn = await agent.turn(
      root.token,
      calls(
        ["write", { path: "/workspace/notes/today.md", content: "alpha\nbeta\n" }],
        ["read", { path: "/workspace/top.txt" }],
        ["edit", { path: "/workspace/notes/today.md", edits: [{ oldText: "beta", newText: "gamma" }] }],
        ["ls", { path: "/workspace" }],
        ["find", { path: "/workspace", pattern: "**/*.md" }],
        ["grep", { path: "/workspace", query: "gamma" }],
        ["delete", { path: "/workspace/top.txt" }],
      ),
    );
    expect(turn.status).toBe("completed");
    expect(turn.results.map((r) => `${r.tool}: ${failure(r) ?? "ok"}`)).toEqual(
      ["write", "read", "edit", "ls", "find", "grep", "delete"].map((t) => `${t}: ok`),
    );
    const [, read, , ls, find, grep] = turn.results.map((r) => (r.output ?? {}) as Record<string, unknown>);
    expect(read?.content).toBe("gamma ray");
    expect(((ls?.entries ?? []) as { name: string }[]).map((e) => e.name)).toEqual(["notes", "top.txt"]);
    expect(((find?.entries ?? []) as { path: string }[]).map((e) => e.path)).toEqual(["/workspace/notes/today.md"]);
    expect(((grep?.matches ?? []) as { path: string; line: number }[]).map((m) => `${m.path}:${m.line}`)).toEqual([
      "/workspace/notes/today.md:2",
      "/workspace/top.txt:1",
    ]);
    // The vault holds what the agent's tools did.
    expect(await httpText(root.token, "notes/today.md")).toBe("alpha\ngamma\n");
    expect((await cap(root.token).read("top.txt")).status).toBe(404);
  });

  it("on a read-only cap, Think's write, edit and delete are refused (EACCES, forbidden), reads work, nothing lands", async () => {
    const root = await mintRoot(fresh("readonly"));
    await cap(root.token).write("keep.md", "original\n");
    const reader = await child(cap(root.token), { path: "", rights: ["read", "list"] });
    const turn = await (await newAgent()).turn(
      reader.minted.token,
      calls(
        ["read", { path: "/workspace/keep.md" }],
        ["write", { path: "/workspace/new.md", content: "x" }],
        ["write", { path: "/workspace/keep.md", content: "overwritten" }],
        ["edit", { path: "/workspace/keep.md", edits: [{ oldText: "original", newText: "changed" }] }],
        ["delete", { path: "/workspace/keep.md" }],
      ),
    );
    expect(turn.status).toBe("completed");
    const [read, ...writes] = turn.results;
    expect(failure(read)).toBeUndefined();
    expect((read?.output as { content?: string } | undefined)?.content).toBe("original");
    expect(writes).toHaveLength(4);
    for (const w of writes) expect(`${w.tool}: ${failure(w)}`).toMatch(new RegExp(`^${w.tool}: EACCES: .*forbidden: `));
    expect((await cap(root.token).read("new.md")).status).toBe(404);
    expect(await httpText(root.token, "keep.md")).toBe("original\n");
  });

  it("a revocation while the agent's turn runs cuts it off at its next call; the refusal names no token or root", async () => {
    const prefix = fresh("revoke");
    const root = await mintRoot(prefix);
    const agentCap = await child(cap(root.token), { path: "", rights: ["read", "write", "list", "delete"] });
    const revokedAt: number[] = [];
    // The owner revokes the agent's cap just before the model's third step, mid-turn.
    const beforeStep = async (step: number) => {
      if (step !== 2) return;
      expect((await agentCap.revoke()).status).toBe(204);
      revokedAt.push(step);
    };
    const agent = await newAgent();
    const turn = await agent.turn(
      agentCap.minted.token,
      calls(
        ["write", { path: "/workspace/a.md", content: "before" }],
        ["read", { path: "/workspace/a.md" }],
        ["write", { path: "/workspace/a.md", content: "after" }],
        ["read", { path: "/workspace/a.md" }],
      ),
      beforeStep,
    );
    expect(revokedAt).toEqual([2]);
    expect(turn.results.map((r) => failure(r) ?? "ok")).toEqual([
      "ok",
      "ok",
      expect.stringMatching(/^EACCES: .*no_such_cap: /),
      expect.stringMatching(/^EACCES: .*no_such_cap: /),
    ]);
    const said = JSON.stringify(turn);
    for (const secret of [agentCap.minted.token, root.token, prefix]) expect(said).not.toContain(secret);
    expect(await httpText(root.token, "a.md")).toBe("before");
    // And in its next turn, every call is refused the same way.
    const next = await agent.turn(agentCap.minted.token, calls(["ls", { path: "/workspace" }]));
    expect(failure(next.results[0])).toMatch(/^EACCES: .*no_such_cap: /);
  });
});
