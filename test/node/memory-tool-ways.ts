/**
 * The two ways into the memory tool that memory-tool.node.test.ts runs every
 * command through: the SDK (`createMemoryTool` over `FsCap`) and the worker's
 * route (`POST /object/<token>/memory`), whose answers must be the same.
 */
import { expect } from "vitest";
import type { FsCap } from "../../clients/typescript/fs-cap.ts";
import { createMemoryTool } from "../../clients/typescript/memory-tool.ts";
import type { MemoryResult } from "../../memory-tool/memory-handler.ts";

export type Run = (input: unknown) => Promise<MemoryResult>;

/** The same command through the SDK or through the HTTP route. */
export const ways: [string, (cap: FsCap) => Run][] = [
  ["SDK", (cap) => createMemoryTool(cap).call],
  [
    "HTTP route",
    (cap) => async (input) => {
      const response = await fetch(`${cap.url}/memory`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(input),
      });
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toBe("text/plain; charset=utf-8");
      const code = response.headers.get("capvault-error-code");
      const text = await response.text();
      return code === null ? { text, isError: false, code: null } : ({ text, isError: true, code } as MemoryResult);
    },
  ],
];
