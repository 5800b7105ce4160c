import { ADMIN_TOKEN_FILE_OPTION, adminFromEnv } from "../cap-source.ts";
import { writeOut } from "../cli-io.ts";
import type { CommandSpec } from "../command-spec.ts";
import { durationOption } from "../duration-option.ts";
import { publicKeyArg } from "../holder-key-file.ts";
import { formatMinted } from "../human-format.ts";
import { printJson } from "../json-output.ts";
import { positionalArgs, rightsOption, stringOption } from "../option-values.ts";
import { terminalSafe } from "../terminal-safe.ts";
import { UsageError } from "../usage-error.ts";

export const mintCommand: CommandSpec = {
  name: "mint",
  summary: "mint a root cap (admin: needs the admin token, e.g. --admin-token-file .capvault/admin-token)",
  usage:
    "mint PREFIX [--backend r2|disk] [--rights LIST] [--ttl DURATION] [--label TEXT] [--holder JWK|PATH] [--admin-token-file PATH]",
  description:
    "Mints a root cap over PREFIX in a storage backend (r2 by default; disk: a folder under the\n" +
    'launcher\'s CAPVAULT_DISK_ROOT, "" for the whole folder). Talks to CAPVAULT_URL (default\n' +
    "http://127.0.0.1:8787) with the admin token from --admin-token-file, CAPVAULT_ADMIN_TOKEN_FILE or\n" +
    "CAPVAULT_ADMIN_TOKEN. Prints only the cap URL on stdout; details on stderr.\n" +
    "--json prints {url, id, rights, expiresAt}.",
  options: {
    backend: { type: "string", value: "r2|disk", help: "storage backend (default r2)" },
    rights: {
      type: "string",
      value: "LIST",
      help: "comma-separated subset of read,write,delete,list,subdir (default all)",
    },
    ttl: { type: "string", value: "DURATION", help: "expire after 3600 (seconds), 90s, 30m, 1h, 7d, 2w or 1h30m" },
    label: { type: "string", value: "TEXT", help: "a note shown in listings" },
    holder: { type: "string", value: "JWK|PATH", help: "bind the root to this public JWK or key file's public half" },
    "admin-token-file": ADMIN_TOKEN_FILE_OPTION,
  },
  async run(input) {
    const [prefix] = positionalArgs(input.positionals, { required: ["PREFIX"] }, "mint");
    const backend = stringOption(input.values.backend) ?? "r2";
    if (backend !== "r2" && backend !== "disk") throw new UsageError("--backend is r2 or disk", "mint");
    const options = {
      backend,
      prefix: prefix,
      rights: rightsOption(input.values.rights, "mint"),
      ttlSeconds: durationOption("ttl", input.values.ttl, "mint"),
      label: stringOption(input.values.label),
      ...(typeof input.values.holder === "string"
        ? { holder: publicKeyArg(input.values.holder, "holder", "mint") }
        : {}),
    } as const;
    const admin = adminFromEnv(input, "mint");
    const cap = await admin.mintRoot(options);
    if (input.json) {
      await printJson(input.io, { url: cap.url, id: cap.id, rights: cap.rights, expiresAt: cap.expiresAt });
      return;
    }
    await writeOut(input.io.stdout, `${terminalSafe(cap.url)}\n`);
    await writeOut(input.io.stderr, formatMinted("minted root", cap));
  },
};
