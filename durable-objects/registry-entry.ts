import type { Retention } from "../shared/retention.ts";
import type { Right } from "../shared/rights.ts";
import type { Backend } from "../shared/wire-types.ts";
import type { CapRef } from "./cap-record.ts";

/** Key prefix of the registry's entries: `root:<id>`, written by the mint, the import and the format-0 re-issue. */
export const ROOT_KEY_PREFIX = "root:";

/** What the registry stores per root: the admin's view of it, and the digest that names its object. No token. */
export interface RegisteredRoot extends CapRef {
  label: string | null;
  backend: Backend;
  prefix: string;
  rights: Right[];
  createdAt: number;
  expiresAt: number | null;
  retention?: Retention;
  /** The format-0 root this one re-issues (legacy-reissue.ts); absent on minted roots. */
  reissuedFrom?: string;
}
