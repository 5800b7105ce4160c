import type { CommandSpec } from "./command-spec.ts";
import { catCommand } from "./commands/cat-command.ts";
import { childrenCommand } from "./commands/children-command.ts";
import { cpCommand } from "./commands/cp-command.ts";
import { exportCommand } from "./commands/export-command.ts";
import { mkdirCommand, rmdirCommand } from "./commands/folder-commands.ts";
import { getCommand } from "./commands/get-command.ts";
import { importCommand } from "./commands/import-command.ts";
import { infoCommand } from "./commands/info-command.ts";
import { keyCommand } from "./commands/key-command.ts";
import { lsCommand } from "./commands/ls-command.ts";
import { mcpCommand } from "./commands/mcp-command.ts";
import { mintCommand } from "./commands/mint-command.ts";
import { mvCommand } from "./commands/mv-command.ts";
import { putCommand } from "./commands/put-command.ts";
import { redactCommand } from "./commands/redact-command.ts";
import { reissueLegacyCommand } from "./commands/reissue-legacy-command.ts";
import { restoreCommand } from "./commands/restore-command.ts";
import { revokeCommand } from "./commands/revoke-command.ts";
import { rmCommand } from "./commands/rm-command.ts";
import { serveCommand } from "./commands/serve-command.ts";
import { shareCommand } from "./commands/share-command.ts";
import { statCommand } from "./commands/stat-command.ts";
import { syncCommand } from "./commands/sync-command.ts";
import { treeCommand } from "./commands/tree-command.ts";
import { versionsCommand } from "./commands/versions-command.ts";
import { watchCommand } from "./commands/watch-command.ts";

/** Every command, in the order the top-level help shows them. */
export const COMMANDS: readonly CommandSpec[] = [
  serveCommand,
  mintCommand,
  exportCommand,
  importCommand,
  infoCommand,
  lsCommand,
  treeCommand,
  catCommand,
  putCommand,
  getCommand,
  cpCommand,
  syncCommand,
  mkdirCommand,
  rmCommand,
  rmdirCommand,
  mvCommand,
  statCommand,
  versionsCommand,
  restoreCommand,
  redactCommand,
  watchCommand,
  shareCommand,
  childrenCommand,
  revokeCommand,
  mcpCommand,
  keyCommand,
  reissueLegacyCommand,
];

export function findCommand(name: string): CommandSpec | undefined {
  return COMMANDS.find((c) => c.name === name);
}
