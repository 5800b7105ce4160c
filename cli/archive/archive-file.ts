import { createHash, type Hash } from "node:crypto";
import { createReadStream } from "node:fs";
import { chmod, type FileHandle, open } from "node:fs/promises";
import { createSealer, decryptStream, ENCRYPTED_MAGIC, type ExactReader, type Sealer } from "./archive-crypto.ts";
import { ArchiveError } from "./archive-error.ts";

/**
 * The archive's records (docs/export-import.md#the-archive): each a JSON line,
 * then, when it declares `len`, exactly that many raw bytes. The first record
 * is the header, the last `{ t: "end", records, sha256 }`: the SHA-256 of every
 * byte before the end line, so a cut, a flipped byte or an edited header is
 * found before anything is imported.
 */
export const ARCHIVE_MAGIC = "capvault-archive";
/** A record's JSON line may not be longer (a page of caps with their children and audit). */
const MAX_LINE_BYTES = 16 * 1024 * 1024;

export interface RecordHead {
  t: string;
  len?: number;
  [field: string]: unknown;
}

/** Buffered exact reads over any byte stream. */
export class BufferedReader implements ExactReader {
  #buffer = Buffer.alloc(0);
  #done = false;
  readonly #source: AsyncIterator<Uint8Array>;

  constructor(source: AsyncIterable<Uint8Array>) {
    this.#source = source[Symbol.asyncIterator]();
  }

  async #fill(): Promise<boolean> {
    if (this.#done) return false;
    const next = await this.#source.next();
    if (next.done) {
      this.#done = true;
      return false;
    }
    this.#buffer = this.#buffer.length === 0 ? Buffer.from(next.value) : Buffer.concat([this.#buffer, next.value]);
    return true;
  }

  async read(n: number): Promise<Buffer> {
    while (this.#buffer.length < n && (await this.#fill()));
    const out = this.#buffer.subarray(0, n);
    this.#buffer = this.#buffer.subarray(out.length);
    return out;
  }

  /** Up to `max` bytes, as soon as any are there (for streaming a body). */
  async some(max: number): Promise<Buffer> {
    if (this.#buffer.length === 0) await this.#fill();
    const out = this.#buffer.subarray(0, max);
    this.#buffer = this.#buffer.subarray(out.length);
    return out;
  }

  /**
   * One line. The pieces of a long one are kept apart and joined once: joined
   * at every piece (64 KiB each, decrypted), a 16 MiB line took 9 s to refuse.
   */
  async line(max: number): Promise<Buffer | null> {
    const at = this.#buffer.indexOf(10);
    if (at !== -1) {
      const out = this.#buffer.subarray(0, at + 1);
      this.#buffer = this.#buffer.subarray(at + 1);
      return out;
    }
    const parts = [this.#buffer];
    let total = this.#buffer.length;
    this.#buffer = Buffer.alloc(0);
    for (;;) {
      if (total > max) throw new ArchiveError("archive_corrupt", "a record header of the archive is too long");
      const next = this.#done ? null : await this.#source.next();
      if (next === null || next.done) {
        this.#done = true;
        if (total === 0) return null;
        throw new ArchiveError("archive_truncated", "the archive ends inside a record header");
      }
      const piece = Buffer.from(next.value.buffer, next.value.byteOffset, next.value.byteLength);
      const end = piece.indexOf(10);
      if (end === -1) {
        parts.push(piece);
        total += piece.length;
        continue;
      }
      parts.push(piece.subarray(0, end + 1));
      this.#buffer = piece.subarray(end + 1);
      return Buffer.concat(parts);
    }
  }
}

/** Where the passphrase comes from, asked only for an encrypted archive. */
export type PassphraseSource = () => Promise<string | null>;

/**
 * The plain record stream of an archive file, decrypted when it is
 * encrypted. Every byte of it is counted into `hash` as the records are read.
 */
export async function openArchive(
  file: string,
  passphrase: PassphraseSource,
): Promise<{ records: RecordReader; encrypted: boolean }> {
  const raw = new BufferedReader(createReadStream(file, { highWaterMark: 256 * 1024 }));
  const first = await raw.read(ENCRYPTED_MAGIC.length);
  if (first.toString("latin1") === ENCRYPTED_MAGIC) {
    const phrase = await passphrase();
    if (phrase === null)
      throw new ArchiveError(
        "passphrase_required",
        "the archive is encrypted: give --passphrase-file PATH or --passphrase-env NAME, or run on a terminal",
      );
    return { records: new RecordReader(new BufferedReader(decryptStream(raw, phrase))), encrypted: true };
  }
  const rest = (async function* () {
    yield first;
    for (;;) {
      const piece = await raw.some(256 * 1024);
      if (piece.length === 0) return;
      yield piece;
    }
  })();
  return { records: new RecordReader(new BufferedReader(rest)), encrypted: false };
}

/** The archive's records in order, each body read (or skipped) before the next header; checked against the trailer. */
export class RecordReader {
  readonly #hash: Hash = createHash("sha256");
  #count = 0;
  #pending = 0;
  /** The end record's hash, once a valid end record was read. */
  digest: string | null = null;

  constructor(private readonly reader: BufferedReader) {}

  /** The next record's head; `null` after a valid end record (which it checks). */
  async next(): Promise<RecordHead | null> {
    if (this.#pending > 0) await this.skip();
    const line = await this.reader.line(MAX_LINE_BYTES);
    if (line === null) throw new ArchiveError("archive_truncated", "the archive ends before its end record");
    let head: RecordHead;
    try {
      head = JSON.parse(line.toString("utf8")) as RecordHead;
    } catch {
      throw this.#notAHeader();
    }
    if (typeof head !== "object" || head === null || typeof head.t !== "string") throw this.#notAHeader();
    if (head.t === "end") {
      const digest = this.#hash.digest("hex");
      if (head.records !== this.#count || head.sha256 !== digest)
        throw new ArchiveError("archive_corrupt", "the archive does not match its end record (damaged or edited)");
      if ((await this.reader.read(1)).length > 0)
        throw new ArchiveError("archive_corrupt", "the archive has bytes after its end record");
      this.digest = digest;
      return null;
    }
    this.#hash.update(line);
    this.#count++;
    const len = head.len ?? 0;
    if (!Number.isSafeInteger(len) || len < 0)
      throw new ArchiveError("archive_corrupt", `record ${this.#count} of the archive has a bad length`);
    this.#pending = len;
    return head;
  }

  #notAHeader(): ArchiveError {
    return this.#count === 0
      ? new ArchiveError("not_an_archive", "this file is not a capvault archive")
      : new ArchiveError("archive_corrupt", `record ${this.#count + 1} of the archive is not a record header`);
  }

  /** The current record's bytes, as they are read (each piece at most 256 KiB). */
  async *body(): AsyncGenerator<Buffer> {
    while (this.#pending > 0) {
      const piece = await this.reader.some(Math.min(this.#pending, 256 * 1024));
      if (piece.length === 0) throw new ArchiveError("archive_truncated", "the archive ends inside a file's bytes");
      this.#pending -= piece.length;
      this.#hash.update(piece);
      yield piece;
    }
  }

  async skip(): Promise<void> {
    for await (const _ of this.body());
  }
}

/**
 * Writes an archive: mode 0600 from its creation (it holds the token key),
 * encrypted when a passphrase is given, with back-pressure, so the CLI holds
 * one piece at a time, never the vault.
 */
export class ArchiveWriter {
  readonly #hash: Hash = createHash("sha256");
  #count = 0;

  private constructor(
    private readonly file: FileHandle,
    private readonly sealer: Sealer | null,
  ) {}

  static async create(path: string, passphrase: string | null): Promise<ArchiveWriter> {
    const file = await open(path, "wx", 0o600).catch((error: NodeJS.ErrnoException) => {
      throw new ArchiveError(
        "local_error",
        error.code === "EEXIST"
          ? "the archive file already exists; name a new one"
          : `cannot create the archive: ${error.code ?? "error"}`,
      );
    });
    // The umask may have taken bits away, never added any; set it exactly anyway.
    await chmod(path, 0o600);
    const sealer = passphrase === null ? null : await createSealer(passphrase);
    const writer = new ArchiveWriter(file, sealer);
    if (sealer) await writer.#out(sealer.head);
    return writer;
  }

  async #out(bytes: Uint8Array): Promise<void> {
    let at = 0;
    while (at < bytes.length) at += (await this.file.write(bytes, at, bytes.length - at)).bytesWritten;
  }

  async #plain(bytes: Uint8Array): Promise<void> {
    if (!this.sealer) return this.#out(bytes);
    for (const chunk of this.sealer.update(bytes)) await this.#out(chunk);
  }

  /** One record: its head (with `len` when a body follows), then the body's pieces. */
  async record(head: RecordHead, body?: AsyncIterable<Uint8Array>): Promise<void> {
    const line = Buffer.from(`${JSON.stringify(head)}\n`);
    this.#hash.update(line);
    this.#count++;
    await this.#plain(line);
    if (!body) return;
    let written = 0;
    for await (const piece of body) {
      written += piece.length;
      if (written > (head.len ?? 0)) throw new ArchiveError("local_error", "a file grew while it was exported");
      this.#hash.update(piece);
      await this.#plain(piece);
    }
    if (written !== head.len) throw new ArchiveError("local_error", "a file changed size while it was exported");
  }

  async finish(): Promise<void> {
    const end = Buffer.from(
      `${JSON.stringify({ t: "end", records: this.#count, sha256: this.#hash.digest("hex") })}\n`,
    );
    await this.#plain(end);
    if (this.sealer) await this.#out(this.sealer.final());
    await this.file.sync();
    await this.file.close();
  }

  async abandon(): Promise<void> {
    await this.file.close().catch(() => undefined);
  }
}
