import { describe, expect, it } from "vitest";
import { call, cap, mintRoot } from "./vault.ts";

// A JSON answer ends its line, so `curl` users see the status or their prompt on a line of its own.

describe("JSON answers", () => {
  it("end in a newline: an answer, a refusal, and the vault's own greeting", async () => {
    const root = cap((await mintRoot(`json-bodies/${crypto.randomUUID().slice(0, 8)}/`)).token);
    const written = await root.write("a.txt", "x");
    const refused = await root.stat("../x");
    const greeting = await call("GET", "/");
    for (const res of [written, refused, greeting]) {
      expect(res.headers.get("content-type")).toBe("application/json");
      const text = await res.text();
      expect(text.endsWith("}\n")).toBe(true);
      expect(() => JSON.parse(text)).not.toThrow();
    }
  });
});
