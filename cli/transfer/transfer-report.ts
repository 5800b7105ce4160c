import type { TransferIssue } from "./tree-types.ts";

/** One thing a transfer did (or, with --dry-run, would do). Paths are relative to the two folders. */
export interface TransferAction {
  op: "upload" | "download" | "delete";
  path: string;
  size: number;
}

/**
 * What `cp -r`, `sync`, `put -r` and `get -r` print with --json: a stable
 * shape. `actions` lists transfers and deletions (not unchanged files), in
 * path order; `issues` what failed or was skipped.
 */
export interface TransferReport {
  direction: "up" | "down";
  dryRun: boolean;
  files: { transferred: number; unchanged: number; deleted: number; failed: number };
  bytes: number;
  /** True when --delete was asked but not done, because something else failed (nothing is deleted on a partial view). */
  deleteSkipped: boolean;
  /** Local symlinks and special files left alone (never followed, uploaded or deleted). */
  skippedLocal: string[];
  actions: TransferAction[];
  issues: TransferIssue[];
}

export function emptyReport(direction: "up" | "down", dryRun: boolean): TransferReport {
  return {
    direction,
    dryRun,
    files: { transferred: 0, unchanged: 0, deleted: 0, failed: 0 },
    bytes: 0,
    deleteSkipped: false,
    skippedLocal: [],
    actions: [],
    issues: [],
  };
}
