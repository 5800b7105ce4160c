import { describe, expect, it } from "vitest";
import { rawHeader } from "./host-request.ts";

describe("rawHeader", () => {
  // The socket's view of a call must read the secret header exactly as a fetch Request would.
  it("answers as Headers.get over the same raw pairs: any case, every occurrence joined, null when absent", () => {
    const raw = ["Host", "disk", "capvault-disk-secret", "a", "X-Other", "1", "CAPVAULT-DISK-SECRET", "b", "empty", ""];
    const headers = new Headers();
    for (let i = 0; i < raw.length; i += 2) headers.append(raw[i]!, raw[i + 1]!);
    for (const name of ["capvault-disk-secret", "Capvault-Disk-Secret", "x-other", "empty", "missing", "host"]) {
      expect(rawHeader(raw, name)).toBe(headers.get(name));
    }
    expect(rawHeader(raw, "capvault-disk-secret")).toBe("a, b");
  });
});
