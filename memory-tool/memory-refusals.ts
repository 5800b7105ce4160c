import { type RefusalEntry, refusalsFrom } from "../shared/refusals.ts";
import type { CapFailure } from "../shared/result.ts";

/** MEMORY_MOUNT, spelled here because memory-path.ts imports this table. */
const MOUNT = "/memories";

/**
 * The memory tool's own refusals, the ones no other part of capvault gives:
 * its input checks and the reference implementation's wording for what the
 * cap refused. Refusals the cap gives (path parser, storage) keep the vault's
 * texts (shared/refusals.ts). Strings here are only what the model itself
 * sent (its path as it wrote it, quoted, or its old_str): never cap state.
 */
const MEMORY_REFUSALS = {
  // -- the input (answered `Error: <code>: <message>`)
  inputNotObject: { code: "bad_request", message: "the memory tool input must be a JSON object" },
  unknownCommand: { code: "bad_request", message: (p: { quoted: string }) => `Unknown command: ${p.quoted}` },
  notAString: { code: "bad_request", message: (p: { field: string }) => `"${p.field}" must be a string` },
  badViewRange: {
    code: "bad_request",
    message: (p: { quoted: string }) =>
      `Invalid \`view_range\` parameter: ${p.quoted}. It should be a list of two integers [start, end]; end -1 means the last line.`,
  },
  notMemoryPath: { code: "invalid_path", message: `memory paths are ${MOUNT} or start with ${MOUNT}/` },
  notUtf8: { code: "bad_request", message: "the file is not UTF-8 text" },
  textTooLarge: {
    code: "too_large",
    message: (p: { limit: number }) => `files read as text are limited to ${p.limit} bytes`,
  },
  // -- in the reference's words (answered `Error: <message>`)
  fileExists: { code: "conflict", message: (p: { shown: string }) => `File ${p.shown} already exists` },
  notAFile: { code: "conflict", message: (p: { shown: string }) => `The path ${p.shown} is not a file.` },
  doesNotExist: { code: "not_found", message: (p: { shown: string }) => `The path ${p.shown} does not exist` },
  doesNotExistGiveValid: {
    code: "not_found",
    message: (p: { shown: string }) => `The path ${p.shown} does not exist. Please provide a valid path.`,
  },
  cannotDeleteMount: { code: "forbidden", message: `Cannot delete the ${MOUNT} directory itself` },
  cannotRenameMount: { code: "forbidden", message: `Cannot rename the ${MOUNT} directory itself` },
  destinationExists: {
    code: "conflict",
    message: (p: { shown: string }) => `The destination ${p.shown} already exists`,
  },
  moveIntoItself: {
    code: "invalid_path",
    message: (p: { from: string; to: string }) => `Cannot move the directory ${p.from} into itself (${p.to})`,
  },
  tooManyToDelete: {
    code: "too_large",
    message: (p: { shown: string; max: number }) =>
      `${p.shown} holds more than ${p.max} entries; nothing was deleted. Delete its subdirectories first.`,
  },
  tooManyToMove: {
    code: "too_large",
    message: (p: { shown: string; max: number }) =>
      `${p.shown} holds more than ${p.max} entries; nothing was moved. Rename its subdirectories one by one.`,
  },
  keptChanging: {
    code: "precondition_failed",
    message: (p: { shown: string }) =>
      `The file ${p.shown} kept changing while it was being edited; no change was made. View it and try again.`,
  },
  emptyOldStr: {
    code: "bad_request",
    message: (p: { shown: string }) =>
      `No replacement was performed, old_str is empty; give the exact text to replace in ${p.shown}.`,
  },
  oldStrMissing: {
    code: "bad_request",
    message: (p: { oldStr: string; shown: string }) =>
      `No replacement was performed, old_str \`${p.oldStr}\` did not appear verbatim in ${p.shown}.`,
  },
  oldStrRepeated: {
    code: "bad_request",
    message: (p: { oldStr: string; lines: string }) =>
      `No replacement was performed. Multiple occurrences of old_str \`${p.oldStr}\` in lines: ${p.lines}. Please ensure it is unique`,
  },
  badInsertLine: {
    code: "bad_request",
    message: (p: { quoted: string; count: number }) =>
      `Invalid \`insert_line\` parameter: ${p.quoted}. It should be within the range of lines of the file: [0, ${p.count}]`,
  },
  overLineLimit: {
    code: "too_large",
    message: (p: { shown: string }) => `File ${p.shown} exceeds maximum line limit of 999,999 lines.`,
  },
  viewTooLong: {
    code: "too_large",
    message: (p: { shown: string; total: number; max: number }) =>
      `File ${p.shown} has ${p.total} lines; view at most ${p.max} at a time with view_range [start, end].`,
  },
} as const satisfies Record<string, RefusalEntry>;

/** The memory tool's refusal for `reason`. */
export const memoryRefusal = refusalsFrom(MEMORY_REFUSALS);

/** A cap refusal that cut a walk short, saying how far it got: the cap's code and text, then the count. */
export function stoppedAfter(error: CapFailure, progress: string): CapFailure {
  return { code: error.code, message: `${error.message}; ${progress} before stopping` };
}
