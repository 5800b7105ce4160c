/** What the bridge needs to know of a JSON-RPC message: the ids it must answer, and whether it opens a session. */
export interface MessageShape {
  /** Ids of the requests in it (a batch may hold several); notifications and responses have none. */
  requestIds: (string | number)[];
  /** Whether it is a batch (an array), so answers go back as one too. */
  batch: boolean;
  initialize: boolean;
}

type Id = string | number;

export function shapeOf(message: unknown): MessageShape {
  const items = Array.isArray(message) ? message : [message];
  const requestIds: Id[] = [];
  let initialize = false;
  for (const item of items) {
    if (typeof item !== "object" || item === null || !("method" in item)) continue;
    const { id, method } = item as { id?: unknown; method?: unknown };
    if (typeof id === "string" || typeof id === "number") requestIds.push(id);
    if (method === "initialize") initialize = true;
  }
  return { requestIds, batch: Array.isArray(message), initialize };
}

/** A JSON-RPC error object; `data` carries the vault's wire code when the vault refused. */
export interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

/** JSON-RPC's own codes, and the implementation-defined one the bridge uses for the vault's refusals. */
export const RPC = { parseError: -32700, invalidRequest: -32600, vaultRefused: -32000, unreachable: -32001 } as const;

export function errorAnswer(id: Id | null, error: RpcError): Record<string, unknown> {
  return { jsonrpc: "2.0", id, error };
}

/**
 * The same error for every request of `shape`, in the shape it was sent in:
 * one answer for a single request, an array for a batch, nothing for
 * notifications and responses (JSON-RPC never answers those).
 */
export function errorForEach(shape: MessageShape, error: RpcError): unknown {
  if (shape.requestIds.length === 0) return undefined;
  const answers = shape.requestIds.map((id) => errorAnswer(id, error));
  return shape.batch ? answers : answers[0];
}

/** An object with a JSON-RPC `error` and a null id: the HTTP layer's refusal of the whole message. */
export function isAnonymousError(value: unknown): value is { error: RpcError } {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const { jsonrpc, id, error } = value as { jsonrpc?: unknown; id?: unknown; error?: unknown };
  return jsonrpc === "2.0" && (id === null || id === undefined) && typeof error === "object" && error !== null;
}

export function isJsonRpc(value: unknown): boolean {
  const items = Array.isArray(value) ? value : [value];
  return (
    items.length > 0 &&
    items.every((m) => typeof m === "object" && m !== null && (m as { jsonrpc?: unknown }).jsonrpc === "2.0")
  );
}
