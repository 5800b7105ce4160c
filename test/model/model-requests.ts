/** The model's requests and what a client observes of each answer, as data. */

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** What a client can observe of one response, in comparable form. */
export interface Observation {
  status: number;
  /** Lower-case names; only headers the contract fixes (see `comparedHeaders`). */
  headers: Record<string, string>;
  /** Parsed JSON, `{ bytes: hex }` for file content, or `null` for an empty body. */
  body: Json;
}

/** A cap named by its role in the sequence, or a token that names no cap. */
export type CapPick = { role: number } | { bogus: "unknown" | "malformed" };

/**
 * How the `path` query parameter arrived, when not plainly: percent-encoding
 * that decodes to no string (a lone surrogate), or the parameter given twice.
 */
export type QueryFault = "undecodable_path" | "repeated_path";

/** One HTTP request, as data. Paths are the strings the server receives after its one decoding. */
export type VaultRequest =
  | { op: "info"; cap: CapPick }
  | { op: "revoke"; cap: CapPick }
  | { op: "read"; cap: CapPick; path: string | null; queryFault?: QueryFault; range?: string; ifNoneMatch?: string }
  | {
      op: "write";
      cap: CapPick;
      path: string | null;
      queryFault?: QueryFault;
      content: Uint8Array;
      /** Absent: no Content-Type header. Absent or empty, the file is `application/octet-stream`. */
      contentType?: string;
      ifMatch?: string;
      ifNoneMatch?: string;
    }
  | { op: "delete"; cap: CapPick; path: string | null; queryFault?: QueryFault }
  | { op: "stat"; cap: CapPick; path: string | null; queryFault?: QueryFault }
  | { op: "mkdir"; cap: CapPick; path: string | null; queryFault?: QueryFault }
  | { op: "rmdir"; cap: CapPick; path: string | null; queryFault?: QueryFault }
  | {
      op: "list";
      cap: CapPick;
      path: string | null;
      queryFault?: QueryFault;
      limit?: string;
      cursor?: string;
      depth?: string;
    }
  /** `body` is the raw JSON text sent. */
  | { op: "move"; cap: CapPick; body: string }
  | { op: "subdir"; cap: CapPick; body: string }
  | { op: "children"; cap: CapPick }
  | { op: "revokeChild"; cap: CapPick; child: CapPick }
  // ---- versions (README.md, "Versions and undo"); `id` is the raw path segment sent ----
  | { op: "versions"; cap: CapPick; path: string | null; queryFault?: QueryFault; limit?: string; cursor?: string }
  | { op: "readVersion"; cap: CapPick; id: string }
  | { op: "restore"; cap: CapPick; id: string }
  | { op: "redact"; cap: CapPick; id: string };
// ---- quotas (being built on another branch): their requests join this union here, and `apply` below ----

export interface ModelAnswer {
  observation: Observation;
  /** For a list: the cursor to send for the next page (the model's own, opaque), or null; for versions, an id. */
  cursor?: string | null;
  /** For a successful subdir: the role of the new cap. */
  minted?: number;
}
