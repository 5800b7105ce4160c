import { describe, expect, it } from "vitest";
import { jsonInSlices } from "./mcp-post.ts";

const SLICE = 256 * 1024;

describe("jsonInSlices", () => {
  it("answers JSON that parses to the value, long strings cut inside a surrogate pair and escapes included", async () => {
    // An emoji straddles the first slice's end; quotes, backslashes and control characters need escaping.
    const text = `${"a".repeat(SLICE - 1)}😀"\\\n\u0001${"é".repeat(SLICE)}`;
    const value = {
      jsonrpc: "2.0",
      id: 1,
      result: { content: [{ type: "text", text }], structuredContent: { content: text } },
    };
    const response = jsonInSlices(value);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(JSON.parse(await response.text())).toEqual(value);
  });

  it("leaves a short string that looks like its placeholder alone", async () => {
    const value = [{ text: "capvault-long-0", big: "b".repeat(SLICE + 1) }, "x"];
    expect(JSON.parse(await jsonInSlices(value).text())).toEqual(value);
  });
});
