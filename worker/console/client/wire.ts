/** The vault's wire shapes, from the one place they are defined (types only: nothing of shared/ ships to the browser). */
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
} from "../../../shared/wire-types.ts";
