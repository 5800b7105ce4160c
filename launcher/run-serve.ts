import { readSettings, SETTINGS_HELP, SettingsError } from "./settings.ts";
import { isWildcardHost, startVault } from "./start-vault.ts";

/**
 * `capvault serve`: start the vault, print how to reach it, stop cleanly on
 * SIGINT/SIGTERM. Returns the exit code for usage errors.
 */
export async function runServe(argv: string[]): Promise<number> {
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
  const vault = await startVault(settings);
  const origin = settings.publicUrl;
  if (vault.adminTokenFresh) {
    process.stdout.write(`admin token (saved in ${settings.state}/admin-token, shown once): ${vault.adminToken}\n`);
  }
  for (const cap of vault.firstRun) {
    process.stdout.write(`${cap.label} root cap: ${cap.url}\n`);
    // The web console takes the token in the fragment, which browsers never send to a server.
    process.stdout.write(`${cap.label} console: ${cap.url.replace("/object/", "/ui#")}\n`);
  }
  process.stdout.write(`capvault listening on ${vault.url} (state ${settings.state}, public URL ${origin})\n`);

  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  await vault.stop();
  return 0;
}
