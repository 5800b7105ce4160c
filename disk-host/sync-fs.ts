/**
 * The subset of `node:fs/promises` the disk host uses, with the same
 * signatures, but with every metadata call (open, stat, close, rename,
 * unlink, mkdir, rmdir, readlink, chmod) made synchronously.
 *
 * Why: a promise-based fs call is handed to libuv's thread pool and back,
 * which costs ~15x the syscall itself in CPU (measured: 250 us for an
 * open+fstat+close that takes 15 us done in place), and a 1 KiB read makes
 * about twenty of them while resolving beneath the cap's root. On a local
 * folder these calls do not wait for the device, so doing them in place
 * blocks the event loop for microseconds. What can wait for the device stays
 * asynchronous: fsync, and reading or writing file content.
 *
 * The syscalls, their flags and their order are exactly those the callers
 * ask for, so containment (beneath.ts) is unchanged: only where they run is.
 */
import {
  type BigIntStats,
  closeSync,
  fchmodSync,
  fstatSync,
  fsync,
  linkSync,
  mkdirSync,
  openSync,
  read,
  readlinkSync,
  readSync,
  renameSync,
  rmdirSync,
  type Stats,
  unlinkSync,
  write,
  writeSync,
} from "node:fs";

/** Content reads up to this size are done in place too: one page-cache copy, cheaper than a pool round trip. */
const SMALL_IO = 64 * 1024;

/** A descriptor with the FileHandle methods the disk host uses. Close it exactly once. */
export class FileHandle {
  private closed = false;

  constructor(readonly fd: number) {}

  async stat(options: { bigint: true }): Promise<BigIntStats>;
  async stat(options?: { bigint?: false }): Promise<Stats>;
  async stat(options?: { bigint?: boolean }): Promise<Stats | BigIntStats> {
    return fstatSync(this.fd, { bigint: options?.bigint === true });
  }

  async close(): Promise<void> {
    // A second close must never close a descriptor number reused since.
    if (this.closed) return;
    this.closed = true;
    closeSync(this.fd);
  }

  async chmod(mode: number): Promise<void> {
    fchmodSync(this.fd, mode);
  }

  sync(): Promise<void> {
    return new Promise((resolve, reject) => fsync(this.fd, (error) => (error ? reject(error) : resolve())));
  }

  read(buffer: Uint8Array, offset: number, length: number, position: number): Promise<{ bytesRead: number }> {
    if (length <= SMALL_IO) return Promise.resolve({ bytesRead: readSync(this.fd, buffer, offset, length, position) });
    return new Promise((resolve, reject) =>
      read(this.fd, buffer, offset, length, position, (error, bytesRead) =>
        error ? reject(error) : resolve({ bytesRead }),
      ),
    );
  }

  write(buffer: Uint8Array, offset: number, length: number): Promise<{ bytesWritten: number }> {
    if (length <= SMALL_IO) return Promise.resolve({ bytesWritten: writeSync(this.fd, buffer, offset, length) });
    return new Promise((resolve, reject) =>
      write(this.fd, buffer, offset, length, null, (error, bytesWritten) =>
        error ? reject(error) : resolve({ bytesWritten }),
      ),
    );
  }

  /** The whole (small) file from its current position: sidecars only. */
  async readFile(encoding: "utf8"): Promise<string> {
    const parts: Buffer[] = [];
    for (;;) {
      const chunk = Buffer.allocUnsafe(SMALL_IO);
      const n = readSync(this.fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      parts.push(chunk.subarray(0, n));
    }
    return Buffer.concat(parts).toString(encoding);
  }

  /** Writes all of `text` at the current position: sidecars only. */
  async writeFile(text: string): Promise<void> {
    const bytes = Buffer.from(text);
    for (let offset = 0; offset < bytes.length; ) offset += writeSync(this.fd, bytes, offset);
  }
}

export async function open(path: string, flags: number, mode?: number): Promise<FileHandle> {
  return new FileHandle(openSync(path, flags, mode));
}

export async function rename(from: string, to: string): Promise<void> {
  renameSync(from, to);
}

export async function link(existing: string, name: string): Promise<void> {
  linkSync(existing, name);
}

export async function unlink(path: string): Promise<void> {
  unlinkSync(path);
}

export async function rmdir(path: string): Promise<void> {
  rmdirSync(path);
}

export async function mkdir(path: string, options: { mode: number }): Promise<void> {
  mkdirSync(path, options);
}

export async function readlink(path: string, options: { encoding: "buffer" }): Promise<Buffer>;
export async function readlink(path: string): Promise<string>;
export async function readlink(path: string, options?: { encoding: "buffer" }): Promise<Buffer | string> {
  return options ? readlinkSync(path, options) : readlinkSync(path);
}
