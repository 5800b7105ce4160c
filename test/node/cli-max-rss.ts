import { processIo } from "../../cli/cli-io.ts";
import { runCli } from "../../cli/run-cli.ts";

/**
 * Runs the CLI with the arguments given, then prints the process's peak
 * resident memory (KiB) on stderr as `maxrss=N`: how a test sees what a
 * command held, in a process of its own.
 */
const code = await runCli(process.argv.slice(2), processIo());
process.stderr.write(`maxrss=${process.resourceUsage().maxRSS}\n`);
process.exitCode = code;
