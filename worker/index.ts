import { app } from "./app.ts";

export { CapObject } from "../durable-objects/cap-object.ts";
export { OAuthRegistry } from "../durable-objects/oauth-registry.ts";
export { RootJournal } from "../durable-objects/root-journal.ts";
export { RootRegistry } from "../durable-objects/root-registry.ts";

export default app;
