import { AsyncLocalStorage } from "node:async_hooks";
import type { CapFiles } from "./cap-files.ts";
import type { CapToolContext } from "./cap-tool.ts";
import type { RequestBudget } from "./request-budget.ts";

/** What the tool calls of one HTTP request work on: its cap, and its budget. */
export interface RequestScope {
  context: CapToolContext;
  budget: RequestBudget;
}

const scopes = new AsyncLocalStorage<RequestScope>();

/** Runs `fn`, and everything it starts, inside `scope`. */
export function runInScope<T>(scope: RequestScope, fn: () => T): T {
  return scopes.run(scope, fn);
}

/**
 * The scope of the request this code runs for. Servers are shared between
 * requests (and caps), so a tool must never hold a cap of its own: it asks
 * here on every use. Outside a request there is no cap to fall back on.
 */
export function currentScope(): RequestScope {
  const scope = scopes.getStore();
  if (!scope) throw new Error("MCP tool call outside a request");
  return scope;
}

const files = (): CapFiles => currentScope().context.files;

/** A {@link CapToolContext} for shared servers: every use reaches the current request's cap. */
export const scopedContext: CapToolContext = {
  files: {
    readText: (path, maxBytes) => files().readText(path, maxBytes),
    writeText: (path, text, options) => files().writeText(path, text, options),
    stat: (path) => files().stat(path),
    list: (path, maxEntries, depth) => files().list(path, maxEntries, depth),
    delete: (path) => files().delete(path),
    move: (from, to) => files().move(from, to),
    readBytes: (path, maxBytes) => files().readBytes(path, maxBytes),
    checkFolder: (path) => files().checkFolder(path),
  },
  get budget() {
    return currentScope().budget;
  },
  get cap() {
    return currentScope().context.cap;
  },
  get origin() {
    return currentScope().context.origin;
  },
  get env() {
    return currentScope().context.env;
  },
};
