import { capFromInput } from "../cap-source.ts";
import { writeOut } from "../cli-io.ts";
import type { CommandSpec } from "../command-spec.ts";
import { durationOption } from "../duration-option.ts";
import { publicKeyArg } from "../holder-key-file.ts";
import { formatMinted } from "../human-format.ts";
import { printJson } from "../json-output.ts";
import { positionalArgs, rightsOption, stringOption } from "../option-values.ts";
import { remotePathArg } from "../remote-path.ts";
import { terminalSafe } from "../terminal-safe.ts";
import { UsageError } from "../usage-error.ts";

/** What a share gets unless asked for more: look, not touch, for a week. More is a deliberate `--rights`/`--ttl`. */
export const SHARE_DEFAULT_RIGHTS = ["read", "list"] as const;
export const SHARE_DEFAULT_TTL = "7d";

export const shareCommand: CommandSpec = {
  name: "share",
  summary: "mint a child cap for a folder (subdir), to delegate",
  usage: "share [CAP] PATH [--rights LIST] [--ttl DURATION] [--label TEXT] [--to PUBLIC-JWK|KEY-FILE]",
  description:
    'Mints a child cap rooted at PATH under CAP ("", . or / keep the same root: pure attenuation).\n' +
    "Rights default to read,list (--rights all: every right CAP has; asking for more than CAP has is refused).\n" +
    "It expires after 7d by default (--ttl never: when CAP does). Expiry never outlives CAP's.\n" +
    "Prints only the new cap URL on stdout (a secret: hand it to whoever should hold it); details go to stderr.\n" +
    "--to binds the child to a holder's public key (from `capvault key new`): its URL is then useless\n" +
    "to anyone without that key, so it may travel through prompts and logs. A bound CAP's children are bound.\n" +
    "--json prints {url, id, rights, expiresAt}.",
  options: {
    rights: {
      type: "string",
      value: "LIST",
      help: "comma-separated subset of read,write,delete,list,subdir, or all (default read,list)",
    },
    ttl: {
      type: "string",
      value: "DURATION",
      help: "expire after 3600 (seconds), 90s, 30m, 1h, 7d, 2w, 1h30m, or never (default 7d)",
    },
    label: { type: "string", value: "TEXT", help: "a note shown by `capvault children`" },
    to: {
      type: "string",
      value: "JWK|PATH",
      help: "bind the child to this public JWK (inline, or a key file's public half)",
    },
  },
  async run(input) {
    const { cap, rest } = capFromInput(input, "share");
    const [path] = positionalArgs(rest, { required: ["PATH"] }, "share");
    const rightsText = stringOption(input.values.rights) ?? SHARE_DEFAULT_RIGHTS.join(",");
    const ttlText = stringOption(input.values.ttl) ?? SHARE_DEFAULT_TTL;
    if (input.values.rights === "" || input.values.ttl === "")
      throw new UsageError("--rights and --ttl take a value (all and never ask for the most)", "share");
    const child = await cap.subdir({
      path: remotePathArg(path),
      rights: rightsText === "all" ? undefined : rightsOption(rightsText, "share"),
      ttlSeconds: ttlText === "never" ? undefined : durationOption("ttl", ttlText, "share"),
      label: stringOption(input.values.label),
      ...(typeof input.values.to === "string" ? { holder: publicKeyArg(input.values.to, "to", "share") } : {}),
    });
    if (input.json) {
      await printJson(input.io, { url: child.url, id: child.id, rights: child.rights, expiresAt: child.expiresAt });
      return;
    }
    await writeOut(input.io.stdout, `${terminalSafe(child.url)}\n`);
    await writeOut(input.io.stderr, formatMinted("shared as", child));
  },
};
