import type { CommandSpec } from "../command-spec.ts";

export const serveCommand: CommandSpec = {
  name: "serve",
  summary: "run the vault locally (Miniflare), as `npm start` does",
  usage: "serve [LAUNCHER FLAGS…]",
  description:
    "Starts the local launcher on 127.0.0.1:8787 with state under ./.capvault/.\n" +
    "On first start it prints the admin token and a root cap URL.\n" +
    "`capvault serve --help` lists the launcher's flags and environment variables.",
  options: {},
  passThrough: true,
  async runRaw(rawArgs) {
    // Loaded only here: the launcher pulls in Miniflare, which no other command needs.
    const { runServe } = await import("../../launcher/run-serve.ts");
    return runServe(rawArgs);
  },
};
