import path from "node:path";
import { markAdminTokenShown } from "./admin-token.ts";
import { endOwnChildren } from "./own-children.ts";
import { PortInUseError } from "./port-in-use.ts";
import { readSettings, SETTINGS_HELP, type Settings, SettingsError } from "./settings.ts";
import { isWildcardHost, type RunningVault, startVault } from "./start-vault.ts";

/**
 * `capvault serve`: start the vault, print how to reach it, stop cleanly on
 * SIGINT/SIGTERM. Returns the exit code for usage errors.
 */
export async function runServe(argv: string[]): Promise<number> {
  try {
    return await serve(argv);
  } finally {
    // The launcher exits only after every process it started has.
    await endOwnChildren();
  }
}

async function serve(argv: string[]): Promise<number> {
  let settings: ReturnType<typeof readSettings>;
  try {
    settings = readSettings(argv, process.env);
  } catch (err) {
    if (err instanceof SettingsError) {
      process.stderr.write(`capvault serve: ${err.message}\n\n${SETTINGS_HELP}`);
      return 2;
    }
    throw err;
  }
  if (settings === "help") {
    process.stdout.write(SETTINGS_HELP);
    return 0;
  }
  // Children (workerd) inherit the environment: the token reaches the worker in its config instead.
  delete process.env.CAPVAULT_ADMIN_TOKEN;
  for (const warning of settings.warnings) process.stderr.write(`capvault serve: warning: ${warning}\n`);
  if (isWildcardHost(settings.host)) {
    process.stderr.write(
      `capvault serve: warning: listening on all interfaces (${settings.host}): the vault is reachable from the network\n`,
    );
  }
  let vault: RunningVault;
  try {
    vault = await startVault(settings);
  } catch (error) {
    if (!(error instanceof PortInUseError)) throw error;
    process.stderr.write(`capvault serve: ${error.message}\n`);
    return 1;
  }
  const origin = settings.publicUrl;
  if (vault.adminTokenFresh) {
    process.stdout.write(`admin token (saved in ${settings.state}/admin-token, shown once): ${vault.adminToken}\n`);
    await markAdminTokenShown(settings.state);
  }
  for (const note of vault.notes) process.stderr.write(`capvault serve: note: ${note}\n`);
  for (const cap of vault.firstRun) {
    process.stdout.write(`${cap.label} root cap: ${cap.url}\n`);
    // The web console takes the token in the fragment, which browsers never send to a server.
    process.stdout.write(`${cap.label} console: ${cap.url.replace("/object/", "/ui#")}\n`);
  }
  process.stdout.write(`${rootsLine(vault.rootCount, settings)}\n`);
  process.stdout.write(`capvault listening on ${vault.url} (state ${settings.state}, public URL ${origin})\n`);

  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  await vault.stop();
  return 0;
}

/**
 * Said at every start: cap tokens are stored hashed, so a lost cap is never
 * shown again; another is one command away, its admin token read from its file.
 */
export function rootsLine(count: number, settings: Settings): string {
  const env = settings.publicUrl === "http://127.0.0.1:8787" ? "" : `CAPVAULT_URL=${settings.publicUrl} `;
  const auth =
    settings.adminToken === null
      ? ` --admin-token-file ${shellWord(settings.adminTokenFile ?? path.join(settings.state, "admin-token"))}`
      : "";
  const tokenEnv = settings.adminToken === null ? "" : "CAPVAULT_ADMIN_TOKEN=… ";
  return (
    `${count} root ${count === 1 ? "cap exists" : "caps exist"}, not shown again (tokens are stored hashed); ` +
    `mint another: ${tokenEnv}${env}npx capvault mint default/${auth}`
  );
}

function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}
