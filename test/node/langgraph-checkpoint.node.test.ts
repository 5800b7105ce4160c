/**
 * CapCheckpointSaver (clients/langgraph) against LangGraph's own published
 * checkpointer suite, `@langchain/langgraph-checkpoint-validation` 1.1.1, in
 * its library form (its CLI is broken in 1.1.1). Every checkpointer the suite
 * makes is a fresh folder of a real running vault's cap.
 *
 * The suite calls vitest's functions as globals, and the node project does
 * not turn globals on (no other file needs them): they are set here, before
 * the suite's module loads.
 */
import * as vitest from "vitest";
import { CapCheckpointSaver } from "../../clients/langgraph/index.ts";
import { type SharedVault, sharedVault } from "./shared-vault.ts";

const { describe, it, test, expect, beforeAll, afterAll, beforeEach, afterEach } = vitest;
Object.assign(globalThis, { describe, it, test, expect, beforeAll, afterAll, beforeEach, afterEach });
const { validate } = await import("@langchain/langgraph-checkpoint-validation");

let vault: SharedVault;

validate({
  checkpointerName: "CapCheckpointSaver (R2)",
  async beforeAll() {
    vault = await sharedVault("langgraph-checkpoint");
  },
  beforeAllTimeout: 60_000,
  createCheckpointer: () => new CapCheckpointSaver(vault.rootCapUrl, { folder: `v-${crypto.randomUUID()}` }),
});

validate({
  checkpointerName: "CapCheckpointSaver (disk)",
  createCheckpointer: () => new CapCheckpointSaver(vault.diskCapUrl, { folder: `v-${crypto.randomUUID()}` }),
});
