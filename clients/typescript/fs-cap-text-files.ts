import type { MemoryFiles } from "../../memory-tool/text-files.ts";
import { collectPages, readTextBody, TEXT_CONTENT_TYPE, tooLarge } from "../../memory-tool/text-files.ts";
import { isErrorCode } from "../../shared/error-codes.ts";
import { refuse } from "../../shared/refusals.ts";
import { failed, ok, type Result } from "../../shared/result.ts";
import { isCapError } from "./cap-error.ts";
import type { FsCap } from "./fs-cap.ts";

/**
 * {@link MemoryFiles} over the SDK's `FsCap`, for apps that hold a cap URL.
 * The SDK's `CapError`s come back as failures with the same wire code.
 *
 * @example
 * const files = fsCapTextFiles(new FsCap(process.env.CAPVAULT_CAP!));
 */
export function fsCapTextFiles(cap: FsCap): MemoryFiles {
  return {
    readText: (path, maxBytes) =>
      settle(async () => {
        const file = await cap.readStream(path);
        if (file.notModified) return refuse("unavailable");
        if (file.meta.length !== null && file.meta.length > maxBytes) {
          await file.body.cancel().catch(() => undefined);
          return tooLarge(maxBytes);
        }
        const text = await readTextBody(file.body, maxBytes);
        return text.ok ? ok({ text: text.value, etag: file.meta.etag }) : text;
      }),

    writeText: (path, text, options = {}) =>
      settle(async () => {
        const written = await cap.write(path, text, {
          contentType: TEXT_CONTENT_TYPE,
          ...(options.ifMatch === undefined ? {} : { ifMatch: options.ifMatch }),
          ...(options.ifNoneMatch === undefined ? {} : { ifNoneMatch: options.ifNoneMatch }),
        });
        return ok(written);
      }),

    stat: (path) =>
      settle(async () => {
        const s = await cap.stat(path);
        return ok(
          s.type === "dir"
            ? { type: "dir" }
            : { type: "file", size: s.size, etag: s.etag, modified: s.modified, contentType: s.contentType },
        );
      }),

    list: (path, maxEntries) =>
      settle(() => collectPages((cursor) => settle(async () => ok(await cap.listPage(path, { cursor }))), maxEntries)),

    delete: (path) => settle(async () => ok(await cap.delete(path).then(() => null))),

    move: (from, to) => settle(async () => ok(await cap.move(from, to).then(() => null))),

    makeFolder: (path) => settle(async () => ok(await cap.makeFolder(path).then(() => null))),

    removeFolder: (path) => settle(async () => ok(await cap.removeFolder(path).then(() => null))),
  };
}

/** Runs an SDK call, turning its `CapError` into a failure value with the same code. */
async function settle<T>(call: () => Promise<Result<T>>): Promise<Result<T>> {
  try {
    return await call();
  } catch (error) {
    if (!isCapError(error)) throw error;
    // A code from a newer server that this copy does not know is still a refusal.
    return failed({ code: isErrorCode(error.code) ? error.code : "unavailable", message: error.message });
  }
}
