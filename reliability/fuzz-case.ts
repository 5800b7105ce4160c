/**
 * One fuzzed request, symbolic until it runs: which token it carries is a
 * role, resolved against the caps of the backend under test, so the same
 * seeded case means the same thing on R2 and on disk.
 */
export type TokenPick =
  | "root"
  | "child"
  | "readOnlyChild"
  | "revoked"
  | "unknown"
  | { literal: string }
  | { mangle: "upper" | "suffix" | "prefix" | "truncate" | "percent" | "dotdot" | "slash" };

export interface FuzzCase {
  /** Short name of the generator that made it, for the findings. */
  kind: string;
  method: string;
  token: TokenPick;
  /** Route after `/object/<token>` (or the whole path for `admin` / `top`). */
  route: string;
  target: "object" | "admin" | "top";
  /** Raw query string without `?`, already encoded as the client means it. */
  query: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
  /** Sent over a raw socket with this Content-Length, whatever the body's true length. */
  declaredLength?: number;
  /** A JSON-RPC / memory tool body: the route answers 200 with a tool-level result. */
  toolRoute?: "mcp" | "memory";
}
