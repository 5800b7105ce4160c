import type { Backend } from "../shared/wire-types.ts";
import { DiskStorage } from "./disk-storage.ts";
import { R2Storage } from "./r2-storage.ts";
import type { StorageAdapter } from "./storage-adapter.ts";
import type { StorageBindings } from "./storage-bindings.ts";
import { uploadLimitsFrom } from "./upload-limits.ts";

/** The adapter for a backend, or `null` where this deployment has none (disk on Cloudflare). */
export function selectStorage(env: StorageBindings, backend: Backend): StorageAdapter | null {
  switch (backend) {
    case "r2":
      return new R2Storage(env.BUCKET, uploadLimitsFrom(env));
    case "disk":
      return env.DISK && env.CAPVAULT_DISK_SECRET
        ? new DiskStorage(env.DISK, env.CAPVAULT_DISK_SECRET, uploadLimitsFrom(env))
        : null;
  }
}
