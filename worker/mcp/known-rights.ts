import type { Right } from "../../shared/rights.ts";

/**
 * The rights of caps this isolate has described, by cap id. Rights are fixed
 * at minting (a child gets a new cap, never narrower rights on the old one),
 * so a remembered entry is never stale; it says nothing about liveness.
 * Bounded: when full it starts over, and a forgotten cap is described again.
 */
const MAX_KNOWN = 10_000;
const rightsById = new Map<string, readonly Right[]>();

export function knownRights(capId: string): readonly Right[] | undefined {
  return rightsById.get(capId);
}

export function rememberRights(capId: string, rights: readonly Right[]): readonly Right[] {
  if (rightsById.size >= MAX_KNOWN) rightsById.clear();
  rightsById.set(capId, rights);
  return rights;
}
