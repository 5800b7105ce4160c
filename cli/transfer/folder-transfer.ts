import { mkdir, stat } from "node:fs/promises";
import { isCapError } from "../../clients/typescript/cap-error.ts";
import type { FsCap } from "../../clients/typescript/fs-cap.ts";
import type { CommandInput } from "../command-spec.ts";
import { printJson } from "../json-output.ts";
import { ReportedFailure } from "../reported-failure.ts";
import { UsageError } from "../usage-error.ts";
import { filesProgress } from "./files-progress.ts";
import { Limiter } from "./limiter.ts";
import { walkLocal } from "./local-walk.ts";
import { walkRemote } from "./remote-walk.ts";
import { printTransferReport } from "./report-text.ts";
import { transferTree } from "./transfer-tree.ts";
import type { WalkResult } from "./tree-types.ts";

export interface FolderTransfer {
  direction: "up" | "down";
  local: string;
  remote: string;
  deleteExtra: boolean;
  command: string;
}

/**
 * One folder transfer from a command: walks both sides (several listings at
 * once), transfers, prints the report (human or --json), and exits 1 when
 * anything failed. A missing destination folder is an empty one; a missing
 * source is an error.
 */
export async function runFolderTransfer(input: CommandInput, cap: FsCap, job: FolderTransfer): Promise<void> {
  const limiter = new Limiter(transfersOption(input, job.command));
  const dryRun = input.values["dry-run"] === true;
  const localIsFolder = await stat(job.local).then(
    (info) => info.isDirectory(),
    () => null,
  );
  if (localIsFolder === false) throw new UsageError(`${job.local} is not a folder`, job.command);
  if (job.direction === "up" && localIsFolder === null) throw new UsageError(`cannot read ${job.local}`, job.command);
  const [source, destination] =
    job.direction === "up"
      ? await Promise.all([walkLocal(job.local), remoteOrEmpty(cap, job.remote, limiter)])
      : await Promise.all([walkRemote(cap, job.remote, limiter), localIsFolder ? walkLocal(job.local) : empty()]);
  if (job.direction === "down" && localIsFolder === null && !dryRun) await mkdir(job.local, { recursive: true });
  const report = await transferTree({
    cap,
    direction: job.direction,
    local: job.local,
    remote: job.remote,
    source,
    destination,
    dryRun,
    deleteExtra: job.deleteExtra,
    limiter,
    progress: (files, bytes) => filesProgress(input.io, files, bytes),
  });
  if (input.json) await printJson(input.io, report);
  else await printTransferReport(input.io, report, input.values.verbose === true);
  if (report.issues.length > 0) throw new ReportedFailure();
}

/** `--transfers N`: files in flight at once (default 8, at most 32). */
function transfersOption(input: CommandInput, command: string): number {
  const text = input.values.transfers;
  if (text === undefined) return 8;
  const value = Number(text);
  if (!/^\d+$/.test(String(text)) || value < 1 || value > 32)
    throw new UsageError("--transfers takes a whole number from 1 to 32", command);
  return value;
}

async function remoteOrEmpty(cap: FsCap, remote: string, limiter: Limiter): Promise<WalkResult> {
  try {
    return await walkRemote(cap, remote, limiter);
  } catch (error) {
    if (isCapError(error) && error.code === "not_found") return empty();
    throw error;
  }
}

function empty(): WalkResult {
  return { files: new Map(), dirs: new Set(), issues: [] };
}
