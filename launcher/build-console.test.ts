import { describe, expect, it } from "vitest";
import { CONSOLE_SCRIPT, CONSOLE_SCRIPT_HASH } from "../worker/console/console-script.generated.ts";
import { buildConsoleScript, scriptHash } from "./build-console.ts";

describe("the console script the worker serves", () => {
  it("is the current build of worker/console/browser/ (run `npm run build:console` after changing it)", async () => {
    expect(CONSOLE_SCRIPT === (await buildConsoleScript())).toBe(true);
  });
  it("carries the hash of exactly that script, which the console's CSP and SRI name", () => {
    expect(CONSOLE_SCRIPT_HASH).toBe(scriptHash(CONSOLE_SCRIPT));
    expect(CONSOLE_SCRIPT_HASH).toMatch(/^sha256-[A-Za-z0-9+/]{43}=$/);
  });
});
