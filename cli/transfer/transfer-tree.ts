import { unlink } from "node:fs/promises";
import path from "node:path";
import { isCapError } from "../../clients/typescript/cap-error.ts";
import type { FsCap } from "../../clients/typescript/fs-cap.ts";
import { joinRemote } from "../remote-path.ts";
import type { FilesProgress } from "./files-progress.ts";
import type { Limiter } from "./limiter.ts";
import { writeLocalFile } from "./local-file-writer.ts";
import { ensureLocalDir } from "./local-folders.ts";
import { localFailure } from "./local-refusal.ts";
import { retryBusy } from "./retry-busy.ts";
import { emptyReport, type TransferReport } from "./transfer-report.ts";
import type { TransferIssue, WalkResult } from "./tree-types.ts";
import { sameContent } from "./unchanged.ts";
import { uploadFile } from "./upload-file.ts";

export interface TreeTransfer {
  cap: FsCap;
  direction: "up" | "down";
  /** The local folder (contents go into, or come from, it). */
  local: string;
  /** The remote folder, relative to the cap ("" = its root). */
  remote: string;
  source: WalkResult;
  destination: WalkResult;
  dryRun: boolean;
  deleteExtra: boolean;
  limiter: Limiter;
  progress: (totalFiles: number, totalBytes: number) => FilesProgress | null;
}

/**
 * Makes the destination hold every source file: each one whose size and hash
 * already match is skipped, the rest are transferred, at most `limiter`'s
 * worth at once. With `deleteExtra`, destination files the source lacks are
 * then deleted, but only when nothing failed: both walks complete (a walk
 * that cannot finish throws before this point) and every transfer done.
 * Deletions only ever name paths the destination walk found below its root.
 */
export async function transferTree(t: TreeTransfer): Promise<TransferReport> {
  const report = emptyReport(t.direction, t.dryRun);
  report.issues.push(...t.source.issues, ...t.destination.issues);
  report.skippedLocal = [...(t.source.skippedLocal ?? []), ...(t.destination.skippedLocal ?? [])].sort();
  const sources = [...t.source.files].sort(([a], [b]) => (a < b ? -1 : 1));
  const progress = t.dryRun ? null : t.progress(sources.length, sum(sources.map(([, f]) => f.size)));
  const verifiedDirs = new Set<string>();
  await Promise.all(
    sources.map(([relative, file]) =>
      t.limiter.run(async () => {
        try {
          const existing = t.destination.files.get(relative);
          const localFile = path.join(t.local, relative);
          const unchanged =
            existing !== undefined &&
            (t.direction === "up"
              ? await sameContent(localFile, file.size, existing)
              : await sameContent(localFile, existing.size, file));
          if (unchanged) {
            report.files.unchanged++;
            progress?.bytes(file.size);
          } else {
            if (!t.dryRun) await retryBusy(() => transferOne(t, relative, verifiedDirs, progress));
            report.files.transferred++;
            report.bytes += file.size;
            report.actions.push({ op: t.direction === "up" ? "upload" : "download", path: relative, size: file.size });
          }
        } catch (error) {
          report.files.failed++;
          report.issues.push(issueOf(relative, error));
        }
        progress?.fileDone();
      }),
    ),
  );
  progress?.finish();
  if (t.deleteExtra) await deleteExtras(t, report);
  report.issues.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  report.actions.sort((a, b) => (a.op === b.op ? (a.path < b.path ? -1 : 1) : a.op === "delete" ? 1 : -1));
  return report;
}

async function transferOne(
  t: TreeTransfer,
  relative: string,
  verifiedDirs: Set<string>,
  progress: FilesProgress | null,
) {
  const remote = joinRemote(t.remote, relative);
  const local = path.join(t.local, relative);
  const onBytes = (count: number) => progress?.bytes(count);
  if (t.direction === "up") {
    await uploadFile(t.cap, local, remote, { onBytes });
    return;
  }
  await ensureLocalDir(t.local, path.posix.dirname(relative) === "." ? "" : path.posix.dirname(relative), verifiedDirs);
  const file = await t.cap.readStream(remote);
  if (file.notModified) return;
  await writeLocalFile(local, file.body, { length: file.meta.length, etag: file.meta.etag }, onBytes);
}

async function deleteExtras(t: TreeTransfer, report: TransferReport): Promise<void> {
  const extras = [...t.destination.files.keys()].filter((relative) => !t.source.files.has(relative)).sort();
  if (extras.length === 0) return;
  if (report.issues.length > 0) {
    report.deleteSkipped = true;
    return;
  }
  await Promise.all(
    extras.map((relative) =>
      t.limiter.run(async () => {
        try {
          if (!t.dryRun) {
            if (t.direction === "up") await t.cap.delete(joinRemote(t.remote, relative));
            else await unlink(path.join(t.local, relative));
          }
          report.files.deleted++;
          report.actions.push({ op: "delete", path: relative, size: t.destination.files.get(relative)?.size ?? 0 });
        } catch (error) {
          report.files.failed++;
          report.issues.push(issueOf(relative, error));
        }
      }),
    ),
  );
}

function issueOf(relative: string, error: unknown): TransferIssue {
  if (isCapError(error)) return { path: relative, code: error.code, message: error.message };
  const local = localFailure(error);
  return { path: relative, code: local.code, message: local.message };
}

function sum(values: number[]): number {
  return values.reduce((a, b) => a + b, 0);
}
