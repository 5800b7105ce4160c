/**
 * The bindings storage needs, and nothing else: the storage layer sees its
 * bucket, its disk host and its upload bounds, never the caps above it.
 */
export interface StorageBindings {
  BUCKET: R2Bucket;
  /** The Node-side disk host; present only under the local launcher. */
  DISK?: Fetcher;
  /** Shared with the disk host by the launcher; proves a call comes from this worker. */
  CAPVAULT_DISK_SECRET?: string;
  /** Upload bounds (upload-limits.ts): seconds without a byte, slowest rate, uploads at once per isolate. */
  CAPVAULT_UPLOAD_IDLE_SECONDS?: string;
  CAPVAULT_UPLOAD_MIN_BYTES_PER_SECOND?: string;
  CAPVAULT_MAX_CONCURRENT_UPLOADS?: string;
}
