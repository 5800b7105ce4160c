/**
 * An Agents SDK workspace over a vault cap reached by a service binding, or
 * by its URL (docs/workers.md, "An Agent's workspace over a cap").
 */
export type { CapWorkspaceOptions } from "./cap-files.ts";
export { CapWorkspace } from "./cap-workspace.ts";
export type { CapDirent, CapGrepMatch, CapStatResult, CapWorkspaceFs } from "./cap-workspace-fs.ts";
export { type FsCode, WorkspaceFsError } from "./fs-errors.ts";
export type { VaultCap, VaultListPage, VaultStat } from "./vault-cap.ts";
export { vaultCapOfUrl } from "./vault-cap-url.ts";
