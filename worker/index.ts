import { app } from "./app.ts";

export { CapObject } from "../durable-objects/cap-object.ts";
export { OAuthRegistry } from "../durable-objects/oauth-registry.ts";
export { RootJournal } from "../durable-objects/root-journal.ts";
export { RootRegistry } from "../durable-objects/root-registry.ts";
// Service-binding entrypoints (docs/workers.md): a cap over Workers RPC, by token or fixed by the binding's props.
export { CapBinding, CapVault } from "./binding/entrypoints.ts";

export default app;
