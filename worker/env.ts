import type { CapObject } from "../durable-objects/cap-object.ts";
import type { RootRegistry } from "../durable-objects/root-registry.ts";

/** Bindings and settings, as declared in wrangler.toml and by the local launcher. */
export interface Env {
  CAPS: DurableObjectNamespace<CapObject>;
  ROOTS: DurableObjectNamespace<RootRegistry>;
  BUCKET: R2Bucket;
  /** The Node-side disk host; present only under the local launcher. */
  DISK?: Fetcher;
  /** Shared with the disk host by the launcher; proves a call comes from this worker. */
  CAPVAULT_DISK_SECRET?: string;
  CAPVAULT_ADMIN_TOKEN?: string;
  /** Signs cap tokens (base64url, >= 32 bytes); without it no token is minted or accepted. */
  CAPVAULT_TOKEN_KEY?: string;
  CAPVAULT_MAX_FILE_BYTES?: string;
  /** Upload bounds (storage-adapters/upload-limits.ts): seconds without a byte, slowest rate, uploads at once per isolate. */
  CAPVAULT_UPLOAD_IDLE_SECONDS?: string;
  CAPVAULT_UPLOAD_MIN_BYTES_PER_SECOND?: string;
  CAPVAULT_MAX_CONCURRENT_UPLOADS?: string;
  /** Origin used in returned cap URLs; defaults to the request's own origin. */
  CAPVAULT_PUBLIC_URL?: string;
}
