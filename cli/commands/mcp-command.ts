import { CAP_FILE_OPTION, capFromInput } from "../cap-source.ts";
import type { CommandSpec } from "../command-spec.ts";
import { CapEndpoint } from "../mcp-bridge/cap-endpoint.ts";
import { runBridge } from "../mcp-bridge/run-bridge.ts";
import { UsageError } from "../usage-error.ts";

export const mcpCommand: CommandSpec = {
  name: "mcp",
  summary: "a stdio MCP server for the cap, for clients that cannot speak HTTP",
  usage: "mcp [--cap-file PATH] [--key-file PATH]",
  description:
    "Speaks MCP over stdin/stdout and forwards each message to the cap's MCP endpoint (<cap>/mcp).\n" +
    "The cap comes from $CAPVAULT_CAP or --cap-file, never from an argument: an MCP client's config\n" +
    "puts arguments on a command line every local user can read. Runs until stdin closes.\n" +
    "A refusal of the vault (a revoked cap: no_such_cap) answers the request as a JSON-RPC error\n" +
    "whose data holds the vault's code; the bridge keeps running. A holder-bound cap needs its key:\n" +
    "--key-file PATH or CAPVAULT_KEY_FILE (each POST is signed).",
  options: { "cap-file": CAP_FILE_OPTION },
  async run(input) {
    // Not even quoted back: it may be the cap URL itself.
    if (input.positionals.length > 0)
      throw new UsageError("mcp takes no arguments: give the cap in CAPVAULT_CAP or --cap-file PATH", "mcp");
    if (input.values["cap-file"] === undefined && !input.io.env.CAPVAULT_CAP)
      throw new UsageError("no cap: set CAPVAULT_CAP or use --cap-file PATH (mcp takes no arguments)", "mcp");
    const { cap } = capFromInput(input, "mcp");
    await runBridge(new CapEndpoint(cap.url, input.io.fetch, input.holder), input.io);
  },
};
