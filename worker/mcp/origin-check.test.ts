import { describe, expect, it } from "vitest";
import { originAllowed } from "./origin-check.ts";

const PUBLIC = "https://vault.example.com";

describe("originAllowed", () => {
  it("lets clients that send no Origin through", () => {
    expect(originAllowed(null, PUBLIC)).toBe(true);
  });

  it("allows the vault's own public origin and loopback origins", () => {
    for (const origin of [
      "https://vault.example.com",
      "http://localhost:6274",
      "http://127.0.0.1:8787",
      "http://[::1]:3000",
      "http://inspector.localhost",
    ]) {
      expect(originAllowed(origin, PUBLIC), origin).toBe(true);
    }
  });

  it("refuses every other origin, look-alikes and malformed ones included", () => {
    for (const origin of [
      "http://evil.example.com",
      "https://evil.example.com",
      "http://vault.example.com",
      "https://vault.example.com:8443",
      "https://vault.example.com.evil.example",
      "http://localhost.evil.example",
      "http://127.0.0.1.evil.example",
      "null",
      "file://",
      "https://vault.example.com/path",
      "",
    ]) {
      expect(originAllowed(origin, PUBLIC), origin).toBe(false);
    }
  });

  it("refuses a non-loopback origin when the vault has no public URL", () => {
    expect(originAllowed("https://vault.example.com", undefined)).toBe(false);
  });
});
