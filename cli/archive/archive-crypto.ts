import { createCipheriv, createDecipheriv, createHash, randomBytes, scrypt, timingSafeEqual } from "node:crypto";
import { ArchiveError } from "./archive-error.ts";

/**
 * An encrypted archive (docs/export-import.md#encryption): a magic line, a
 * JSON line of scrypt parameters, then AES-256-GCM chunks, each framed as a
 * 4-byte length, a flag byte (1 on the last chunk) and ciphertext + tag. The
 * nonce is a random prefix and the chunk's counter; the flag and counter are
 * authenticated with the parameter line, so reordering, dropping or
 * truncating chunks, or editing the parameters, fails to decrypt.
 */
export const ENCRYPTED_MAGIC = "CAPVAULT-ENC1\n";
const CHUNK_BYTES = 64 * 1024;
const TAG_BYTES = 16;
const SCRYPT = { N: 2 ** 15, r: 8, p: 1 } as const;
const SCRYPT_MAXMEM = 64 * 1024 * 1024;

interface Params {
  kdf: "scrypt";
  N: number;
  r: number;
  p: number;
  salt: string;
  nonce: string;
  /** SHA-256 of the second half of the derived key: tells a wrong passphrase from damaged chunks. */
  check: string;
}

async function derive(passphrase: string, salt: Buffer, params: Pick<Params, "N" | "r" | "p">) {
  const bytes = await new Promise<Buffer>((resolve, reject) =>
    scrypt(passphrase.normalize("NFC"), salt, 64, { ...params, maxmem: SCRYPT_MAXMEM }, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  );
  return { key: bytes.subarray(0, 32), check: createHash("sha256").update(bytes.subarray(32)).digest("hex") };
}

function nonceFor(prefix: Buffer, counter: number): Buffer {
  const nonce = Buffer.alloc(12);
  prefix.copy(nonce, 0, 0, 8);
  nonce.writeUInt32BE(counter, 8);
  return nonce;
}

function aadFor(paramLine: Buffer, counter: number, final: boolean): Buffer {
  const tail = Buffer.alloc(5);
  tail.writeUInt32BE(counter, 0);
  tail[4] = final ? 1 : 0;
  return Buffer.concat([paramLine, tail]);
}

/** Seals plain archive bytes into the encrypted layout: `head` first, then what each `update` and the `final` give. */
export interface Sealer {
  head: Buffer;
  update(plain: Uint8Array): Buffer[];
  final(): Buffer;
}

export async function createSealer(passphrase: string): Promise<Sealer> {
  const salt = randomBytes(16);
  const prefix = randomBytes(8);
  const { key, check } = await derive(passphrase, salt, SCRYPT);
  const params: Params = {
    kdf: "scrypt",
    ...SCRYPT,
    salt: salt.toString("base64"),
    nonce: prefix.toString("base64"),
    check,
  };
  const paramLine = Buffer.from(`${JSON.stringify(params)}\n`);
  let counter = 0;
  let pending = Buffer.alloc(0);
  const seal = (chunk: Buffer, final: boolean) => {
    const cipher = createCipheriv("aes-256-gcm", key, nonceFor(prefix, counter));
    cipher.setAAD(aadFor(paramLine, counter, final));
    const body = Buffer.concat([cipher.update(chunk), cipher.final(), cipher.getAuthTag()]);
    counter++;
    const head = Buffer.alloc(5);
    head.writeUInt32BE(body.length, 0);
    head[4] = final ? 1 : 0;
    return Buffer.concat([head, body]);
  };
  return {
    head: Buffer.concat([Buffer.from(ENCRYPTED_MAGIC), paramLine]),
    update(plain) {
      pending = pending.length === 0 ? Buffer.from(plain) : Buffer.concat([pending, plain]);
      const out: Buffer[] = [];
      while (pending.length > CHUNK_BYTES) {
        out.push(seal(pending.subarray(0, CHUNK_BYTES), false));
        pending = pending.subarray(CHUNK_BYTES);
      }
      return out;
    },
    final: () => seal(pending, true),
  };
}

/** A byte source read in exact amounts (the archive file), for the decrypting side. */
export interface ExactReader {
  /** Exactly `n` bytes, or fewer at the end of the file. */
  read(n: number): Promise<Buffer>;
  /** One line with its `\n`, at most `max` bytes; null at the end of the file. */
  line(max: number): Promise<Buffer | null>;
}

/** The plain archive bytes of an encrypted one (its magic line already read). */
export async function* decryptStream(source: ExactReader, passphrase: string): AsyncGenerator<Buffer> {
  const paramLine = await source.line(4096);
  let params: Params;
  try {
    params = JSON.parse(paramLine?.toString("utf8") ?? "") as Params;
  } catch {
    throw new ArchiveError("archive_corrupt", "the archive's encryption parameters are damaged");
  }
  if (
    !paramLine ||
    params.kdf !== "scrypt" ||
    params.N !== SCRYPT.N ||
    params.r !== SCRYPT.r ||
    params.p !== SCRYPT.p ||
    typeof params.salt !== "string" ||
    typeof params.nonce !== "string" ||
    typeof params.check !== "string"
  )
    throw new ArchiveError("archive_corrupt", "the archive's encryption parameters are damaged");
  const prefix = Buffer.from(params.nonce, "base64");
  const { key, check } = await derive(passphrase, Buffer.from(params.salt, "base64"), params);
  const expected = Buffer.from(params.check, "hex");
  const actual = Buffer.from(check, "hex");
  if (expected.length !== actual.length || !timingSafeEqual(expected, actual))
    throw new ArchiveError("wrong_passphrase", "wrong passphrase for this archive; nothing was imported");
  for (let counter = 0; ; counter++) {
    const head = await source.read(5);
    if (head.length < 5) throw new ArchiveError("archive_truncated", "the archive ends before its last chunk");
    const length = head.readUInt32BE(0);
    const final = head[4] === 1;
    if (length < TAG_BYTES || length > CHUNK_BYTES + TAG_BYTES || (head[4] !== 0 && head[4] !== 1))
      throw new ArchiveError("archive_corrupt", "an encrypted chunk of the archive is damaged");
    const body = await source.read(length);
    if (body.length < length) throw new ArchiveError("archive_truncated", "the archive ends inside a chunk");
    const decipher = createDecipheriv("aes-256-gcm", key, nonceFor(prefix, counter));
    decipher.setAAD(aadFor(paramLine, counter, final));
    decipher.setAuthTag(body.subarray(length - TAG_BYTES));
    let plain: Buffer;
    try {
      plain = Buffer.concat([decipher.update(body.subarray(0, length - TAG_BYTES)), decipher.final()]);
    } catch {
      throw new ArchiveError(
        "archive_corrupt",
        "an encrypted chunk of the archive failed its check (damaged or edited)",
      );
    }
    yield plain;
    if (final) {
      if ((await source.read(1)).length > 0)
        throw new ArchiveError("archive_corrupt", "the archive has bytes after its last chunk");
      return;
    }
  }
}
