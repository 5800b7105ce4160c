import { describe, expect, it } from "vitest";
import rootConfig from "../vitest.config.ts";

// The filter that counts is the root config's: vitest ignores a project's own `onConsoleLog`.
const filter = rootConfig.test?.onConsoleLog;
const workers = { project: { name: "workers" } };
const node = { project: { name: "node" } };

describe("the root config's console filter", () => {
  it("drops the workers project's request lines, as the worker prints them", () => {
    expect(filter).toBeTypeOf("function");
    for (const line of [
      "PUT /object/{vsiqlk7qa4cbwhkg}/file 201 18ms\n",
      "DELETE /object/{cap} 404 0ms",
      "GET (no route) 404 3ms\n",
      "POST /admin/roots 201 12ms\n",
    ]) {
      expect(filter?.(line, "stdout", workers as never), line).toBe(false);
      expect(filter?.(line, "stdout", undefined), line).toBe(false);
    }
  });

  it("keeps every other log, and the node project's own", () => {
    for (const line of ["bisimulation: seed 1, 200 sequences", "GET /x is slow because…", "PUT /object/x 201 18ms!"])
      expect(filter?.(line, "stdout", workers as never), line).not.toBe(false);
    expect(filter?.("PUT /object/{cap}/file 201 18ms", "stdout", node as never)).not.toBe(false);
  });
});
