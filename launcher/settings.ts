import path from "node:path";
import { parseArgs } from "node:util";

/** Everything the launcher can be told, each from a flag or the environment variable of the same meaning. */
export interface Settings {
  port: number;
  host: string;
  /** Folder holding Durable Object storage, the local R2 bucket and the admin token. */
  state: string;
  /** Given on the command line or in the environment (discouraged: see {@link Settings.warnings}); else from `adminTokenFile`. */
  adminToken: string | null;
  /** A file holding the admin token; default `<state>/admin-token`, generated on first start. */
  adminTokenFile: string | null;
  /** Origin put in minted cap URLs: never taken from a request's Host header. */
  publicUrl: string;
  maxFileBytes: number | null;
  /** Base folder the disk host serves. */
  diskRoot: string;
  /** True when CAPVAULT_DISK_ROOT (or its flag) was given explicitly. */
  diskRootGiven: boolean;
  /** Said once on stderr at start: secrets given where other processes can read them. */
  warnings: string[];
}

/** Shorter admin tokens are refused: the admin token mints roots over everything. */
export const MIN_ADMIN_TOKEN_LENGTH = 32;

export class SettingsError extends Error {}

const OPTIONS = {
  port: { type: "string", env: "PORT" },
  host: { type: "string", env: "HOST" },
  state: { type: "string", env: "CAPVAULT_STATE" },
  "admin-token": { type: "string", env: "CAPVAULT_ADMIN_TOKEN" },
  "admin-token-file": { type: "string", env: "CAPVAULT_ADMIN_TOKEN_FILE" },
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
  --admin-token-file F  CAPVAULT_ADMIN_TOKEN_FILE (default: STATE/admin-token, generated once, mode 0600)
  --admin-token T       CAPVAULT_ADMIN_TOKEN     (discouraged: readable in the process list or /proc/PID/environ)
  --public-url URL      CAPVAULT_PUBLIC_URL      (origin in returned cap URLs; default http://HOST:PORT,
                                                  required when HOST listens on all interfaces)
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
    const message = (err as Error).message;
    // `npm start --port 8788` hands npm the flag and the launcher only its value.
    const npmHint = /^Unexpected argument/.test(message)
      ? "; npm keeps flags before `--` for itself: `npm start -- --port 8788` or `PORT=8788 npm start`"
      : "";
    throw new SettingsError(message + npmHint);
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
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new SettingsError("port must be an integer from 0 to 65535");
  const maxRaw = pick("max-file-bytes");
  const maxFileBytes = maxRaw === undefined ? null : Number(maxRaw);
  if (maxFileBytes !== null && (!Number.isSafeInteger(maxFileBytes) || maxFileBytes < 1)) {
    throw new SettingsError("max file bytes must be a positive integer");
  }
  const host = pick("host") ?? "127.0.0.1";
  const publicUrl = pick("public-url") ?? defaultPublicUrl(host, port);
  if (!/^https?:\/\/[^/]+\/?$/.test(publicUrl))
    throw new SettingsError("public URL must be an origin such as https://vault.example");
  const warnings: string[] = [];
  const adminToken = pick("admin-token") ?? null;
  if (adminToken !== null) {
    if (adminToken.length < MIN_ADMIN_TOKEN_LENGTH)
      throw new SettingsError(`the admin token must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters`);
    warnings.push(
      typeof values["admin-token"] === "string"
        ? "the admin token on the command line is visible to every local user in the process list; use --admin-token-file"
        : "CAPVAULT_ADMIN_TOKEN stays readable in /proc/PID/environ of this process and its parents; prefer --admin-token-file",
    );
  }
  const tokenFile = pick("admin-token-file");
  const diskRootRaw = pick("disk-root");
  return {
    port,
    host,
    state: path.resolve(expandHome(pick("state") ?? ".capvault", env)),
    adminToken,
    adminTokenFile: tokenFile === undefined ? null : path.resolve(expandHome(tokenFile, env)),
    publicUrl: publicUrl.replace(/\/$/, ""),
    maxFileBytes,
    diskRoot: path.resolve(expandHome(diskRootRaw ?? "vault-data", env)),
    diskRootGiven: diskRootRaw !== undefined,
    warnings,
  };
}

/**
 * Where clients reach a vault on `host:port`. A wildcard host has no single
 * answer, and guessing from each request's Host header would let a caller
 * choose the origin of the cap URLs it is handed, so it must be given.
 */
function defaultPublicUrl(host: string, port: number): string {
  if (host === "0.0.0.0" || host === "::" || host === "*" || port === 0) {
    throw new SettingsError("listening on all interfaces or on port 0 needs --public-url (the origin clients use)");
  }
  return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
}

function expandHome(p: string, env: NodeJS.ProcessEnv): string {
  return p === "~" || p.startsWith("~/") ? path.join(env.HOME ?? "", p.slice(1)) : p;
}
