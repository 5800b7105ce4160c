import { refuse } from "../shared/refusals.ts";
import { ok, type Result } from "../shared/result.ts";
import { FORMAT_FILE_NAME, formatStamp, parseFormatStamp, STATE_FORMAT } from "../shared/state-format.ts";

/**
 * The R2 key layout's format (shared/state-format.ts): the object
 * `.capvault-format` at the bucket's top. The name is reserved (no cap can
 * name or list a `.capvault-*` key), and outside every root's prefix.
 *
 * Checked by every Durable Object that reaches the bucket when it wakes
 * with state, once per isolate: a bucket laid out by a newer build is
 * refused by every object, which then writes nothing; a bucket without a
 * stamp (format 1, or new) gets this build's. The first check an isolate
 * passes is kept (the layout of a bucket never moves backwards, and a newer
 * build's deploy replaces this one's isolates).
 */
let passed = false;

export async function checkR2Format(bucket: R2Bucket | undefined, build = STATE_FORMAT): Promise<Result<null>> {
  if (!bucket || passed) return ok(null);
  try {
    const stamp = await bucket.get(FORMAT_FILE_NAME);
    if (stamp === null) {
      await bucket.put(FORMAT_FILE_NAME, JSON.stringify(formatStamp()), {
        httpMetadata: { contentType: "application/json" },
      });
    } else {
      const stored = parseFormatStamp((await stamp.text()).slice(0, 4096));
      if (stored === null) return refuse("stateFormatUnreadable");
      if (stored > build) return refuse("stateFormatNewer", { stored, build });
      // Older stamps would be migrated here, step by step, the stamp written last.
      if (stored < build) await bucket.put(FORMAT_FILE_NAME, JSON.stringify(formatStamp()));
    }
  } catch {
    // Not known: asked again at the next wake; the object serves, as it would with R2 down.
    return ok(null);
  }
  passed = true;
  return ok(null);
}

/** Whether this isolate has passed the check already: then a waking object need not wait for it. */
export function r2FormatChecked(): boolean {
  return passed;
}

/** Tests only: forget the check this isolate passed. */
export function forgetR2FormatCheck(): void {
  passed = false;
}
