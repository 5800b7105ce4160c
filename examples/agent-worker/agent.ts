/**
 * A minimal Agent (the Agents SDK's `Agent`, a Durable Object) whose files are
 * a capvault cap: it keeps the cap's token in its own state, never a stub (a
 * stub lives no longer than its request), and reaches the files through the
 * vault's CapVault binding, as a workspace (clients/agents-workspace/). What the
 * cap allows is all it can do; revoke the cap and the Agent is cut off at its
 * next call. Routes, below /agents/notes-agent/<name>/:
 *   PUT  /cap          the cap token (the body), kept in the Agent's state
 *   PUT  /file?path=P  write the body to P
 *   GET  /file?path=P  read P
 *   GET  /ls?path=P    list P
 */
import { Agent, routeAgentRequest } from "agents";
import { CapWorkspace, type VaultCap, WorkspaceFsError } from "../../clients/agents-workspace/index.ts";

interface Env {
  VAULT: { open(token: string): VaultCap };
  VAULT_HTTP: Fetcher;
  NotesAgent: DurableObjectNamespace<NotesAgent>;
}

export class NotesAgent extends Agent<Env, { token: string | null }> {
  override initialState = { token: null };

  /** The Agent's files: the cap it was given, opened afresh for every call. */
  workspace = CapWorkspace.perCall(() => this.env.VAULT.open(this.state.token ?? ""));

  override async onRequest(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const route = url.pathname.split("/").pop();
    const path = `/${url.searchParams.get("path") ?? ""}`;
    try {
      if (route === "cap" && request.method === "PUT") {
        this.setState({ token: (await request.text()).trim() });
        return new Response(null, { status: 204 });
      }
      if (route === "file" && request.method === "PUT") {
        await this.workspace.writeFile(path, await request.text());
        return new Response(null, { status: 204 });
      }
      if (route === "file") {
        const text = await this.workspace.readFile(path);
        return text === null ? new Response("not found\n", { status: 404 }) : new Response(text);
      }
      if (route === "ls") return Response.json(await this.workspace.readDir(path));
      return new Response("not found\n", { status: 404 });
    } catch (error) {
      // The vault's refusal as a Node-like error: its code, and the vault's own words (never a host path).
      if (error instanceof WorkspaceFsError)
        return Response.json(
          { code: error.code, message: error.message },
          { status: error.code === "EACCES" ? 403 : 400 },
        );
      throw error;
    }
  }
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    // Everything not an Agent's is the vault's own (its caps, its admin, its console), unchanged.
    return (await routeAgentRequest(request, env)) ?? env.VAULT_HTTP.fetch(request);
  },
} satisfies ExportedHandler<Env>;
