/**
 * The worker test/workers-think/ runs in, as another team's would be: a
 * Think agent class (think-agent.ts), and a fetch handler that passes every
 * request to the vault's routes (`VAULT_HTTP`), as examples/agent-worker does,
 * so the tests' HTTP helpers (test/workers/vault.ts) reach the vault.
 */
export { ScriptedThinkAgent } from "./think-agent.ts";

export default {
  fetch: (request: Request, env: { VAULT_HTTP: Fetcher }) => env.VAULT_HTTP.fetch(request),
} satisfies ExportedHandler<{ VAULT_HTTP: Fetcher }>;
