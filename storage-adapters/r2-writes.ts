import { nativeChunks } from "../shared/native-chunks.ts";
import { refuse } from "../shared/refusals.ts";
import { ok, type Result } from "../shared/result.ts";
import { yieldTurn } from "../shared/yield-turn.ts";
import { copyChunks } from "./copy-chunks.ts";
import { EMPTY_SHA256, hex, onlyIfCurrent, SHA256_KEY } from "./r2-objects.ts";
import type { StorageWriteOptions, StoredWrite } from "./storage-adapter.ts";
import { INLINE_VERSION_MAX, isBlobName, R2_VERSIONS_PREFIX } from "./version-blobs.ts";
import { readWhole, WHOLE_BODY_MAX } from "./whole-body.ts";

/** Bytes a copy inside storage moves between two turns of the runtime (see takingTurns). */
const TURN_BYTES = 64 * 1024;

/**
 * The write pipeline once a write is allowed: a body of known length into
 * R2, hashed on the way, with its version blob when one is kept. Empty and
 * small bodies are one put with their hash; a streamed one is put and then
 * sealed with its hash, or staged as its blob and placed from there.
 */
export class R2Writes {
  constructor(private readonly bucket: R2Bucket) {}

  /** Streams the body into a put, exactly `options.length` bytes, judged against `current`. */
  async store(
    key: string,
    body: ReadableStream<Uint8Array>,
    options: StorageWriteOptions,
    current: R2Object | null,
  ): Promise<Result<StoredWrite>> {
    // R2 needs a body of known length; FixedLengthStream also refuses a body
    // that delivers more or fewer bytes than declared, so R2 never stores a
    // truncated file. A body that fails once every byte went through would
    // still land (the runtime stores a put whose stream reached its length,
    // even when the stream is aborted after): copyChunks holds its last chunk
    // back until it has ended cleanly, so a failed body never reaches the length.
    // An empty file is stored from an empty buffer: R2 does not read a
    // zero-length stream, and a pipe into it would wait for a reader forever.
    if (options.length === 0) return this.writeEmpty(key, body, options, current);
    if (options.length <= WHOLE_BODY_MAX) return this.writeWhole(key, body, options, current);
    const fixed = new FixedLengthStream(options.length);
    let delivered = 0;
    // Hashed on the way to R2, so the bytes are read once.
    const digest = new crypto.DigestStream("SHA-256");
    // A copy that fails aborts the digest, which then rejects; only a copy that succeeded reads it.
    digest.digest.catch(() => undefined);
    const piping = copyChunks(body, [digest, fixed.writable], {
      onChunk: (chunk) => {
        delivered += chunk.byteLength;
      },
    });
    if (isBlobName(options.keepAs)) {
      const staged = await this.stage(options.keepAs, fixed.readable, options.contentType, () => delivered, options);
      if (!staged.ok) return staged;
      // The blob becomes the file only once the body has ended cleanly.
      if (!(await piping)) {
        await this.bucket.delete(R2_VERSIONS_PREFIX + options.keepAs).catch(() => undefined);
        return delivered === options.length ? refuse("storageFailed") : refuse("lengthMismatch");
      }
      const sha256 = hex(await digest.digest);
      return this.place(key, options.keepAs, sha256, options, current);
    }
    // R2 re-checks the precondition atomically (see onlyIfCurrent).
    let stored: R2Object | null;
    try {
      stored = await this.bucket.put(key, fixed.readable, {
        httpMetadata: { contentType: options.contentType },
        ...onlyIfCurrent(options, current),
      });
    } catch {
      // Never wait for the pipe here: R2 may have refused without reading the
      // body, and then the pipe would wait for a reader forever.
      // Nothing was stored either way. Blame the client only when its body
      // was the wrong length; otherwise it was storage, and worth a retry.
      return delivered === options.length ? refuse("storageFailed") : refuse("lengthMismatch");
    }
    // R2 re-checks the precondition atomically; null means it failed there
    // (and it may not have read the body: do not wait for the pipe).
    if (!stored) return refuse("preconditionFailed");
    await piping;
    const sha256 = hex(await digest.digest);
    await this.seal(key, stored, sha256, options.signal);
    return ok({ created: current === null, size: stored.size, etag: stored.etag, sha256, kept: false });
  }

  /**
   * A streamed write that keeps a version goes to its version blob first, and
   * from there to its key with its hash ({@link place}): two writes of the
   * bytes, as the file alone costs (a put, then a copy onto itself for the
   * hash, see seal), where putting the file, sealing it and copying it to
   * its blob cost three, each holding the runtime's one thread.
   */
  private async stage(
    blob: string,
    body: ReadableStream<Uint8Array>,
    contentType: string,
    delivered: () => number,
    options: StorageWriteOptions,
  ): Promise<Result<null>> {
    try {
      await this.bucket.put(R2_VERSIONS_PREFIX + blob, body, { httpMetadata: { contentType } });
      return ok(null);
    } catch {
      // Never wait for the pipe here (see store); nothing was stored.
      return delivered() === options.length ? refuse("storageFailed") : refuse("lengthMismatch");
    }
  }

  /**
   * Copies a staged blob to its key, with its hash, under the write's
   * precondition (as store puts it). Until this put lands the file is what
   * it was: a failure, a precondition lost to another writer, or a
   * revocation (`signal` cuts the copy until the blob is read whole, and a
   * put of a cut body stores nothing) leaves it so and drops the blob. A
   * crash in between leaves the file as it was, no version recorded (the
   * journal hears of a write only once it answers) and the blob's bytes
   * unreachable: no row names them.
   */
  private async place(
    key: string,
    blob: string,
    sha256: string,
    options: StorageWriteOptions,
    current: R2Object | null,
  ): Promise<Result<StoredWrite>> {
    const staged = R2_VERSIONS_PREFIX + blob;
    let stored: R2Object | null | undefined;
    try {
      const object = options.signal?.aborted ? null : await this.bucket.get(staged);
      if (object && !options.signal?.aborted) {
        const fixed = new FixedLengthStream(object.size);
        // A revocation cuts the copy until the blob has been read whole, never after (see CopyOptions.cut).
        const piping = copyChunks(takingTurns(object.body), [fixed.writable], { cut: options.signal });
        stored = await this.bucket.put(key, fixed.readable, {
          httpMetadata: { contentType: options.contentType },
          customMetadata: { [SHA256_KEY]: sha256 },
          ...onlyIfCurrent(options, current),
        });
        // null: the precondition failed there, maybe before the body was read (do not wait for the pipe).
        if (stored) await piping;
      } else await object?.body.cancel();
    } catch {
      stored = undefined;
    }
    if (!stored) {
      await this.bucket.delete(staged).catch(() => undefined);
      return stored === null ? refuse("preconditionFailed") : refuse("storageFailed");
    }
    return ok({ created: current === null, size: stored.size, etag: stored.etag, sha256, kept: true });
  }

  /**
   * Records the hash of a streamed write. R2 takes custom metadata only with
   * the put, before the hash of a streamed body is known, so the object is
   * copied onto itself with it, if it is still the version just stored (a
   * later write keeps its own hash). Until then, and if this fails, the file
   * reports `sha256: null`, as a file stored before hashes were kept does.
   * The copy is as large as the file, and a revocation waits for the write:
   * once `signal` aborts the copy is cut (a put of a failed body stores
   * nothing) or never started, so the revocation is answered at once.
   */
  private async seal(key: string, stored: R2Object, sha256: string, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return;
    try {
      const object = await this.bucket.get(key, { onlyIf: { etagMatches: stored.etag } });
      if (!object || !("body" in object)) return;
      if (object.version !== stored.version || signal?.aborted) return void (await object.body.cancel());
      const fixed = new FixedLengthStream(object.size);
      const piping = object.body.pipeTo(fixed.writable, signal ? { signal } : {}).catch(() => undefined);
      await this.bucket.put(key, fixed.readable, {
        httpMetadata: object.httpMetadata ?? {},
        customMetadata: { ...object.customMetadata, [SHA256_KEY]: sha256 },
        onlyIf: { etagMatches: stored.etag, uploadedBefore: new Date(stored.uploaded.getTime() + 1) },
      });
      await piping;
    } catch {
      // The file is stored whole; only its hash is missing.
    }
  }

  /** A small body, read whole and hashed first, so the put records its hash: one R2 write. */
  private async writeWhole(
    key: string,
    body: ReadableStream<Uint8Array>,
    options: StorageWriteOptions,
    current: R2Object | null,
  ): Promise<Result<StoredWrite>> {
    const bytes = await readWhole(body, options.length);
    if (!bytes) return refuse("lengthMismatch");
    const sha256 = hex(await crypto.subtle.digest("SHA-256", bytes));
    return this.putWhole(key, bytes, sha256, options, current);
  }

  /**
   * One buffer, two puts at once: the file, and its version blob when one is
   * asked. A file that is not stored keeps no blob either. A version of at
   * most {@link INLINE_VERSION_MAX} bytes is no put: its bytes go back to the
   * cap object for the journal's row (`inline`).
   */
  private async putWhole(
    key: string,
    bytes: Uint8Array,
    sha256: string,
    options: StorageWriteOptions,
    current: R2Object | null,
  ): Promise<Result<StoredWrite>> {
    const metadata = { httpMetadata: { contentType: options.contentType }, customMetadata: { [SHA256_KEY]: sha256 } };
    const inline = isBlobName(options.keepAs) && bytes.byteLength <= INLINE_VERSION_MAX;
    const blob = isBlobName(options.keepAs) && !inline ? R2_VERSIONS_PREFIX + options.keepAs : null;
    const [stored, kept] = await Promise.all([
      this.bucket.put(key, bytes, { ...metadata, ...onlyIfCurrent(options, current) }).catch(() => undefined),
      blob === null
        ? inline
        : this.bucket.put(blob, bytes, metadata).then(
            () => true,
            () => false,
          ),
    ]);
    if (!stored) {
      if (kept && blob !== null) await this.bucket.delete(blob).catch(() => undefined);
      return stored === undefined ? refuse("storageFailed") : refuse("preconditionFailed");
    }
    const written = { created: current === null, size: stored.size, etag: stored.etag, sha256, kept };
    return ok(inline ? { ...written, inline: bytes } : written);
  }

  private async writeEmpty(
    key: string,
    body: ReadableStream<Uint8Array>,
    options: StorageWriteOptions,
    current: R2Object | null,
  ): Promise<Result<StoredWrite>> {
    const reader = body.getReader();
    // A body that fails (or times out) before it ends stores nothing, even an empty file.
    const first = await reader.read().catch(() => null);
    await reader.cancel().catch(() => undefined);
    if (!first || (!first.done && first.value && first.value.byteLength > 0)) return refuse("lengthMismatch");
    return this.putWhole(key, new Uint8Array(0), EMPTY_SHA256, options, current);
  }
}

/**
 * `source` in chunks of 64 KiB, each read after a turn of the runtime
 * (shared/yield-turn.ts): a copy inside storage reads as fast as the bucket
 * answers, and on the local runtime the bucket shares the one thread with
 * every other request, so an unpaced copy of a large file holds that thread
 * for its whole length. The runtime fills each buffer natively
 * (`readAtLeast`), so JavaScript sees a chunk per turn, not the bucket's
 * small ones, and copyChunks hands each back to be filled again. A stream
 * that cannot be read so is returned as it is.
 */
function takingTurns(source: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
  return nativeChunks(source, { min: TURN_BYTES, max: TURN_BYTES }, yieldTurn);
}
