/**
 * The worker test/workers-think/ runs in: the vault's own worker, unchanged
 * (its default export, entrypoints and Durable Object classes, named one by
 * one: the pool builds `ctx.exports` from the names it sees), and beside it a
 * Think agent class, bound by vitest.think.config.ts. Kept out of the
 * `workers` project so its other files do not load the Agents SDK.
 */
export {
  CapBinding,
  CapObject,
  CapVault,
  default,
  OAuthRegistry,
  RootJournal,
  RootRegistry,
} from "../../worker/index.ts";
export { ScriptedThinkAgent } from "./think-agent.ts";
