#!/usr/bin/env -S npx tsx
/**
 * The `capvault` command. Everything lives in `run-cli.ts`; this file only
 * binds it to the real process.
 */
import { processIo } from "./cli-io.ts";
import { runCli } from "./run-cli.ts";

// exitCode, not exit(): pending stdout writes must flush, and `serve` must keep running.
process.exitCode = await runCli(process.argv.slice(2), processIo());
