/** The vault's wire shapes, from the one place they are defined (types only: nothing of shared/ ships to the browser). */
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
