/**
 * The model of `POST /move` of a folder (docs/api.md): the same single-entry
 * requests the worker makes (worker/folder-ops.ts), each answered by the
 * model itself, so rights, refusals and the journal of every file move follow
 * from the model's own stat, list, mkdir, move and rmdir.
 */
import type { Json, ModelAnswer, Observation } from "./model-requests.ts";
import { error, json } from "./model-state.ts";

/** As FOLDER_OP_LIMIT in worker/folder-ops.ts: files and folders below the moved folder. */
export const MODEL_FOLDER_LIMIT = 20;

/** The model's answers to the single-entry requests, on the cap that asked for the move. */
export interface FolderSteps {
  stat(path: string): ModelAnswer;
  list(path: string, cursor: string | undefined): ModelAnswer;
  mkdir(path: string): ModelAnswer;
  rmdir(path: string): ModelAnswer;
  move(from: string, to: string, overwrite: boolean): ModelAnswer;
}

const within = (path: string, under: string) => under === "" || path === under || path.startsWith(`${under}/`);
const isOk = (o: Observation) => o.status >= 200 && o.status < 300;
const codeOf = (o: Observation) => (o.body as { error?: { code?: string } } | null)?.error?.code;
const typeOf = (o: Observation) => (o.body as { type?: string }).type;

/** `from` and `to` are canonical paths of the cap (the file move already accepted both). */
export function moveFolderModel(
  steps: FolderSteps,
  echo: { from: Json; to: Json },
  from: string,
  to: string,
  overwrite: boolean,
): ModelAnswer {
  if (within(to, from)) return { observation: error("conflict") };
  if (within(from, to)) return { observation: error("conflict") };
  const there = steps.stat(to).observation;
  if (!isOk(there) && codeOf(there) !== "not_found") return { observation: there };
  if (isOk(there) && typeOf(there) !== "dir") return { observation: error("conflict") };

  const dirs = [from];
  const files: string[] = [];
  for (let i = 0; i < dirs.length; i++) {
    let cursor: string | undefined;
    do {
      const page = steps.list(dirs[i]!, cursor);
      if (!isOk(page.observation)) return { observation: page.observation };
      for (const entry of (page.observation.body as { entries: { name: string; type: string }[] }).entries) {
        (entry.type === "dir" ? dirs : files).push(`${dirs[i]}/${entry.name}`);
        if (dirs.length - 1 + files.length > MODEL_FOLDER_LIMIT) return { observation: error("too_large") };
      }
      cursor = page.cursor ?? undefined;
    } while (cursor !== undefined);
  }
  const rebased = (path: string) => to + path.slice(from.length);
  if (isOk(there)) {
    const checks: [string, string][] = [...dirs.slice(1).map((d) => [d, "dir"]), ...files.map((f) => [f, "file"])] as [
      string,
      string,
    ][];
    for (const [path, type] of checks) {
      const stat = steps.stat(rebased(path)).observation;
      if (!isOk(stat) && codeOf(stat) === "not_found") continue;
      if (!isOk(stat)) return { observation: stat };
      if (typeOf(stat) !== type) return { observation: error("conflict") };
      if (type === "file" && !overwrite) return { observation: error("conflict") };
    }
  }
  // Each subfolder is first tried as one entry (a link on disk moves so); the model has no links, so each is refused.
  for (const dir of dirs.slice(1)) {
    const probe = steps.move(dir, rebased(dir), overwrite).observation;
    if (!isOk(probe) && codeOf(probe) !== "conflict" && codeOf(probe) !== "not_found") return { observation: probe };
  }
  for (const dir of dirs) {
    const made = steps.mkdir(rebased(dir)).observation;
    if (!isOk(made)) return { observation: made };
  }
  const moved = { files: 0, folders: 0 };
  for (const file of files) {
    const step = steps.move(file, rebased(file), overwrite).observation;
    if (!isOk(step)) return { observation: step };
    moved.files++;
  }
  for (const dir of dirs.slice().reverse()) {
    const gone = steps.rmdir(dir).observation;
    if (!isOk(gone) && codeOf(gone) !== "not_found") return { observation: gone };
    if (isOk(gone)) moved.folders++;
  }
  return { observation: json(200, { ...echo, moved }) };
}
