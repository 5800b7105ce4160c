import type { ObjectEnv } from "../durable-objects/object-env.ts";

/** Bindings and settings, as declared in wrangler.toml and by the local launcher. */
export interface Env extends ObjectEnv {
  CAPVAULT_ADMIN_TOKEN?: string;
  /**
   * Origin used in returned cap URLs (wrangler.toml [vars], or set by the
   * launcher). Without it nothing that hands out cap URLs is served.
   */
  CAPVAULT_PUBLIC_URL?: string;
  /**
   * When a vault of state format 0 first ran with signed tokens (ms since the
   * epoch): its roots created before are format 0 (docs/upgrading.md). The
   * launcher sets it from the state folder's `format-0-until`.
   */
  CAPVAULT_FORMAT0_UNTIL?: string;
}
