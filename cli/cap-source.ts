import { AdminClient } from "../client/admin-client.ts";
import { FsCap } from "../client/fs-cap.ts";
import type { CommandInput } from "./command-spec.ts";
import { UsageError } from "./usage-error.ts";

export const DEFAULT_VAULT_URL = "http://127.0.0.1:8787";

const CAP_URL_SHAPE = /^https?:\/\/[^\s]+\/object\/[^/\s]+\/?$/;

/**
 * Takes the cap from the first positional when it is a cap URL, else from
 * `CAPVAULT_CAP`. No relative path can look like a cap URL (`//` is an empty
 * segment, which the vault refuses), so `capvault ls notes` with CAPVAULT_CAP
 * set and `capvault ls <url> notes` are never ambiguous.
 *
 * Error messages never quote the URL: it is a secret.
 */
export function capFromInput(input: CommandInput, command: string): { cap: FsCap; rest: string[] } {
  const [first, ...others] = input.positionals;
  if (first !== undefined && /^https?:\/\//i.test(first)) {
    if (!CAP_URL_SHAPE.test(first)) throw new UsageError("the first argument is a URL but not a cap URL (<origin>/object/<token>)", command);
    return { cap: newCap(first, input, command), rest: others };
  }
  const fromEnv = input.io.env.CAPVAULT_CAP;
  if (fromEnv === undefined || fromEnv === "") {
    throw new UsageError("no cap: pass a cap URL as the first argument or set CAPVAULT_CAP", command);
  }
  if (!CAP_URL_SHAPE.test(fromEnv.trim())) throw new UsageError("CAPVAULT_CAP is not a cap URL (<origin>/object/<token>)", command);
  return { cap: newCap(fromEnv.trim(), input, command), rest: input.positionals };
}

function newCap(url: string, input: CommandInput, command: string): FsCap {
  try {
    return new FsCap(url, input.io.fetch ? { fetch: input.io.fetch } : {});
  } catch {
    throw new UsageError("not a cap URL (<origin>/object/<token>)", command);
  }
}

/** The admin client from `CAPVAULT_URL` (default http://127.0.0.1:8787) and `CAPVAULT_ADMIN_TOKEN`. */
export function adminFromEnv(input: CommandInput, command: string): AdminClient {
  const token = input.io.env.CAPVAULT_ADMIN_TOKEN;
  if (token === undefined || token === "") {
    throw new UsageError("CAPVAULT_ADMIN_TOKEN is not set (the launcher printed it on first start)", command);
  }
  const url = input.io.env.CAPVAULT_URL || DEFAULT_VAULT_URL;
  try {
    return new AdminClient(url, token, input.io.fetch ? { fetch: input.io.fetch } : {});
  } catch {
    throw new UsageError("CAPVAULT_URL is not an http(s) URL", command);
  }
}
