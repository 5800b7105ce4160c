/**
 * The vault's wire shapes, from the one place they are defined (types only).
 * The only shared/ code the page ships is the holder key's and proof's
 * (holder-store.ts, api.ts): pure WebCrypto, the same the SDK signs with.
 */
export type { Limits, Usage } from "../../../shared/quota.ts";
export type { Right } from "../../../shared/rights.ts";
export type {
  AuditEntry,
  AuditTrail,
  CapInfo,
  CapTree,
  CapTreeNode,
  ErrorBody,
  ListEntry,
  ListPage,
  MintedCap,
  Version,
  VersionPage,
} from "../../../shared/wire-types.ts";
