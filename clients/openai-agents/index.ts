/** The vault for OpenAI Agents JS (`@openai/agents`): a `Session` kept in a cap (docs/openai-agents.md). */
export { CapSession, type CapSessionOptions } from "./cap-session.ts";
export { CapSessionError, type CapSessionErrorCode } from "./session-file.ts";
