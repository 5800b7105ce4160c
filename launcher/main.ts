import { runServe } from "./run-serve.ts";

// `npm start` entry point until the CLI takes over: `capvault serve`.
process.exitCode = await runServe(process.argv.slice(2));
