import path from "node:path";
import { parseArgs } from "node:util";

/** Everything the launcher can be told, each from a flag or the environment variable of the same meaning. */
export interface Settings {
  port: number;
  host: string;
  /** Folder holding Durable Object storage, the local R2 bucket and the admin token. */
  state: string;
  adminToken: string | null;
  publicUrl: string | null;
  maxFileBytes: number | null;
  /** Base folder the disk host serves. */
  diskRoot: string;
  /** True when CAPVAULT_DISK_ROOT (or its flag) was given explicitly. */
  diskRootGiven: boolean;
}

export class SettingsError extends Error {}

const OPTIONS = {
  port: { type: "string", env: "PORT" },
  host: { type: "string", env: "HOST" },
  state: { type: "string", env: "CAPVAULT_STATE" },
  "admin-token": { type: "string", env: "CAPVAULT_ADMIN_TOKEN" },
  "public-url": { type: "string", env: "CAPVAULT_PUBLIC_URL" },
  "max-file-bytes": { type: "string", env: "CAPVAULT_MAX_FILE_BYTES" },
  "disk-root": { type: "string", env: "CAPVAULT_DISK_ROOT" },
  help: { type: "boolean", env: null },
} as const;

export const SETTINGS_HELP = `Usage: capvault serve [options]

Runs the vault locally on Miniflare. Every option can also be set by the environment variable shown.

  --port N              PORT                     (default 8787)
  --host H              HOST                     (default 127.0.0.1)
  --state DIR           CAPVAULT_STATE           (default ./.capvault)
  --admin-token T       CAPVAULT_ADMIN_TOKEN     (default: generated once, kept in the state folder)
  --public-url URL      CAPVAULT_PUBLIC_URL      (origin used in returned cap URLs)
  --max-file-bytes N    CAPVAULT_MAX_FILE_BYTES  (default 104857600)
  --disk-root DIR       CAPVAULT_DISK_ROOT       (folder served by the disk backend; default ./vault-data)
`;

/**
 * Reads flags first, then the environment. Also accepts the environment
 * variable names as flags (`--CAPVAULT_DISK_ROOT=~/notes`).
 */
export function readSettings(argv: string[], env: NodeJS.ProcessEnv): Settings | "help" {
  const normalised = argv.map((arg) => {
    const m = /^--([A-Z_]+)(=.*)?$/.exec(arg);
    if (!m) return arg;
    const entry = Object.entries(OPTIONS).find(([, o]) => o.env === m[1]);
    return entry ? `--${entry[0]}${m[2] ?? ""}` : arg;
  });
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: normalised,
      options: Object.fromEntries(Object.entries(OPTIONS).map(([k, o]) => [k, { type: o.type }])) as never,
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new SettingsError((err as Error).message);
  }
  if (values.help) return "help";
  const pick = (name: keyof typeof OPTIONS): string | undefined => {
    const flag = values[name];
    if (typeof flag === "string") return flag;
    const envName = OPTIONS[name].env;
    const fromEnv = envName ? env[envName] : undefined;
    return fromEnv === "" ? undefined : fromEnv;
  };
  const port = Number(pick("port") ?? "8787");
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new SettingsError("port must be an integer from 0 to 65535");
  const maxRaw = pick("max-file-bytes");
  const maxFileBytes = maxRaw === undefined ? null : Number(maxRaw);
  if (maxFileBytes !== null && (!Number.isSafeInteger(maxFileBytes) || maxFileBytes < 1)) {
    throw new SettingsError("max file bytes must be a positive integer");
  }
  const publicUrl = pick("public-url") ?? null;
  if (publicUrl !== null && !/^https?:\/\/[^/]+\/?$/.test(publicUrl)) throw new SettingsError("public URL must be an origin such as https://vault.example");
  const diskRootRaw = pick("disk-root");
  return {
    port,
    host: pick("host") ?? "127.0.0.1",
    state: path.resolve(expandHome(pick("state") ?? ".capvault", env)),
    adminToken: pick("admin-token") ?? null,
    publicUrl: publicUrl?.replace(/\/$/, "") ?? null,
    maxFileBytes,
    diskRoot: path.resolve(expandHome(diskRootRaw ?? "vault-data", env)),
    diskRootGiven: diskRootRaw !== undefined,
  };
}

function expandHome(p: string, env: NodeJS.ProcessEnv): string {
  return p === "~" || p.startsWith("~/") ? path.join(env.HOME ?? "", p.slice(1)) : p;
}
