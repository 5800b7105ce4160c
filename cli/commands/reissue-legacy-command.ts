import type { ReissuedCap } from "../../shared/wire-types.ts";
import { ADMIN_TOKEN_FILE_OPTION, adminFromEnv } from "../cap-source.ts";
import { writeOut } from "../cli-io.ts";
import type { CommandSpec } from "../command-spec.ts";
import { jsonText } from "../json-output.ts";
import { positionalArgs, stringOption } from "../option-values.ts";
import { terminalSafe } from "../terminal-safe.ts";
import { UsageError } from "../usage-error.ts";

/** A vault that never says done is answered after this many steps, rather than looped on forever. */
const MAX_STEPS = 1_000_000;

export const reissueLegacyCommand: CommandSpec = {
  name: "reissue-legacy",
  summary: "re-issue the caps of state format 0 (unsigned 32-character tokens) as signed caps (admin)",
  usage: "reissue-legacy [--minted-before TIME] [--admin-token-file PATH]",
  description:
    "A vault first run before signed tokens (state format 0) answers its old 32-character tokens\n" +
    "410 legacy_token. This gives each of those caps a new signed token over the same root, rights,\n" +
    "label, expiry, children, audit, files and versions, and wipes the old cap: its token never works\n" +
    "again. Prints one line per cap on stdout, `OLD-ID<TAB>NEW-URL<TAB>LABEL`, for the admin to hand the\n" +
    "new URLs to their holders (they are shown nowhere else). Runs in steps; a run cut short is run again:\n" +
    "it prints the URLs not yet printed (the same URLs), then goes on. A run with nothing left prints nothing.\n" +
    "The launcher records when a format-0 state folder first got its token key; otherwise (a vault on\n" +
    "Cloudflare, or upgraded by a build before this command) --minted-before names that time, ISO 8601:\n" +
    "roots created before it are format 0. See docs/upgrading.md. Talks to CAPVAULT_URL with the admin\n" +
    "token, as `capvault mint` does. --json prints {reissued: [{oldId, id, url, label, parent, depth}]}.",
  options: {
    "minted-before": {
      type: "string",
      value: "TIME",
      help: "ISO 8601: when the vault first ran with signed tokens (roots created before are format 0)",
    },
    "admin-token-file": ADMIN_TOKEN_FILE_OPTION,
  },
  async run(input) {
    positionalArgs(input.positionals, { required: [] }, "reissue-legacy");
    const mintedBefore = stringOption(input.values["minted-before"]);
    if (mintedBefore !== undefined && !Number.isFinite(Date.parse(mintedBefore))) {
      throw new UsageError("--minted-before takes an ISO 8601 time, e.g. 2026-11-30T14:00:00Z", "reissue-legacy");
    }
    const admin = adminFromEnv(input, "reissue-legacy");
    let ack: string[] = [];
    let count = 0;
    const seen = new Set<string>();
    if (input.json) await writeOut(input.io.stdout, '{"reissued":[');
    for (let steps = 0; steps < MAX_STEPS; steps++) {
      const step = await admin.reissueLegacyStep({ ...(mintedBefore ? { mintedBefore } : {}), ack });
      // Each URL is written out before it is acknowledged, so a run cut short loses none: the vault hands it again.
      for (const cap of step.reissued) {
        if (seen.has(cap.oldId)) continue;
        seen.add(cap.oldId);
        await writeOut(input.io.stdout, input.json ? `${count > 0 ? "," : ""}\n${jsonText(cap)}` : line(cap));
        count++;
      }
      ack = step.reissued.map((cap) => cap.oldId);
      if (step.done && step.reissued.length === 0) break;
    }
    if (input.json) await writeOut(input.io.stdout, `${count > 0 ? "\n" : ""}]}\n`);
    await writeOut(
      input.io.stderr,
      count === 0
        ? "no caps of state format 0 left to re-issue\n"
        : `re-issued ${count} cap${count === 1 ? "" : "s"} of state format 0; their old tokens open nothing now\n`,
    );
  },
};

function line(cap: ReissuedCap): string {
  return `${cap.oldId}\t${terminalSafe(cap.url)}\t${terminalSafe(cap.label ?? "")}\n`;
}
