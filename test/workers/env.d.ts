import type { Env as VaultEnv } from "../../worker/env.ts";

// `env` from cloudflare:test carries the worker's own bindings.
declare global {
  namespace Cloudflare {
    interface Env extends VaultEnv {}
  }
}
