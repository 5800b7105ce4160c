/**
 * The part of a vault cap the workspace adapter calls, as a structural type:
 * a `CapVault.open(token)` stub or a `CapBinding` service binding (docs/workers.md)
 * both have it. Declared here rather than imported, because clients may not
 * import worker/ (test/layering.ts); the Workers pool test checks that the
 * real stubs are assignable to it.
 */
export interface VaultCap {
  read(path: string): Promise<Uint8Array>;
  readText(path: string): Promise<string>;
  readStream(path: string): Promise<ReadableStream<Uint8Array>>;
  write(
    path: string,
    data: Uint8Array | string | ReadableStream<Uint8Array>,
    options?: { contentType?: string; ifMatch?: string; ifNoneMatch?: string; length?: number },
  ): Promise<{ created: boolean; size: number; etag: string }>;
  delete(path: string): Promise<unknown>;
  move(from: string, to: string, options?: { overwrite?: boolean }): Promise<unknown>;
  /** A folder and any missing above it (`PUT /folder`). */
  makeFolder(path: string): Promise<unknown>;
  stat(path: string): Promise<VaultStat>;
  list(path: string, options?: { cursor?: string; limit?: number; depth?: number }): Promise<VaultListPage>;
}

/** `stat`'s answer (docs/api.md): a file's size, time and type, or a folder. */
export type VaultStat =
  | { type: "file"; size: number; modified: string; contentType: string; etag?: string }
  | { type: "dir" };

/** One page of `list` (docs/api.md#listings). */
export interface VaultListPage {
  entries: { name: string; type: "file" | "dir"; size?: number; modified?: string }[];
  cursor: string | null;
}
