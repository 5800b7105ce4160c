import { stat } from "node:fs/promises";
import { UsageError } from "../usage-error.ts";

/** A single-file upload source must be a regular file; a folder is pointed at -r. Usage errors: nothing is sent. */
export async function checkLocalFile(file: string, command: string): Promise<void> {
  let info: Awaited<ReturnType<typeof stat>>;
  try {
    info = await stat(file);
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? "error"}`, command);
  }
  if (info.isDirectory()) throw new UsageError(`${file} is a folder: use -r`, command);
  if (!info.isFile()) throw new UsageError(`${file} is not a regular file`, command);
}
