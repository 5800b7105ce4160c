import { describe, expect, it } from "vitest";
import { CONSOLE_SCRIPT } from "../worker/console/console-script.generated.ts";
import { buildConsoleScript } from "./build-console.ts";

describe("the console script the worker serves", () => {
  it("is the current build of worker/console/client/ (run `npm run build:console` after changing it)", async () => {
    expect(CONSOLE_SCRIPT === (await buildConsoleScript())).toBe(true);
  });
});
