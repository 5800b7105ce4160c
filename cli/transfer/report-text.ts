import { type CliIo, writeOut } from "../cli-io.ts";
import { formatBytes } from "../human-format.ts";
import { terminalSafe as safe } from "../terminal-safe.ts";
import type { TransferReport } from "./transfer-report.ts";

const VERBS = { upload: "uploaded", download: "downloaded", delete: "deleted" } as const;

/**
 * The human side of a transfer report. stdout: one line per action with
 * --dry-run or -v, then a summary; stderr: one line per issue. Every path is
 * escaped: remote names are chosen by whoever wrote them.
 */
export async function printTransferReport(io: CliIo, report: TransferReport, verbose: boolean): Promise<void> {
  if (report.dryRun || verbose) {
    for (const action of report.actions) {
      const verb = report.dryRun ? `would ${action.op}` : VERBS[action.op];
      const size = action.op === "delete" ? "" : ` (${formatBytes(action.size)})`;
      await writeOut(io.stdout, `${verb} ${safe(action.path)}${size}\n`);
    }
  }
  await writeOut(io.stdout, summary(report));
  for (const issue of report.issues) {
    await writeOut(io.stderr, `capvault: ${safe(issue.path)}: ${safe(issue.code)}: ${safe(issue.message)}\n`);
  }
  if (report.deleteSkipped) {
    await writeOut(io.stderr, "capvault: --delete skipped: nothing is deleted when anything else failed\n");
  }
  if (report.skippedLocal.length > 0 && verbose) {
    for (const name of report.skippedLocal)
      await writeOut(io.stderr, `capvault: ${safe(name)}: skipped (symlink or special file)\n`);
  }
}

function summary(report: TransferReport): string {
  const { files } = report;
  const moved = report.direction === "up" ? "uploaded" : "downloaded";
  const parts = [
    `${report.dryRun ? `would have ${moved}` : moved} ${files.transferred} ${plural(files.transferred)} (${formatBytes(report.bytes)})`,
    `${files.unchanged} unchanged`,
  ];
  if (files.deleted > 0) parts.push(`${report.dryRun ? "would delete" : "deleted"} ${files.deleted}`);
  if (files.failed > 0 || report.issues.length > 0) parts.push(`${report.issues.length} failed or skipped`);
  if (report.skippedLocal.length > 0)
    parts.push(`${report.skippedLocal.length} local symlinks or special files left alone`);
  return `${parts.join(", ")}\n`;
}

function plural(count: number): string {
  return count === 1 ? "file" : "files";
}
