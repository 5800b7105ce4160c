import path from "node:path";
import { describe, expect, it } from "vitest";
import { readSettings, SettingsError } from "./settings.ts";

describe("readSettings", () => {
  it("has the documented defaults", () => {
    const s = readSettings([], {});
    expect(s).toMatchObject({
      port: 8787,
      host: "127.0.0.1",
      adminToken: null,
      adminTokenFile: null,
      publicUrl: "http://127.0.0.1:8787",
      maxFileBytes: null,
      diskRootGiven: false,
      warnings: [],
    });
    expect(s !== "help" && s.state).toBe(path.resolve(".capvault"));
    expect(s !== "help" && s.diskRoot).toBe(path.resolve("vault-data"));
  });

  it("reads the environment, and flags win over it", () => {
    const env = {
      PORT: "9000",
      HOST: "0.0.0.0",
      CAPVAULT_PUBLIC_URL: "https://vault.example/",
      CAPVAULT_STATE: "/tmp/s",
      CAPVAULT_MAX_FILE_BYTES: "10",
      CAPVAULT_DISK_ROOT: "~/notes",
      HOME: "/home/a",
    };
    expect(readSettings([], env)).toMatchObject({
      port: 9000,
      host: "0.0.0.0",
      publicUrl: "https://vault.example",
      state: "/tmp/s",
      maxFileBytes: 10,
      diskRoot: "/home/a/notes",
      diskRootGiven: true,
    });
    expect(readSettings(["--port", "9100", "--state=/tmp/t"], env)).toMatchObject({ port: 9100, state: "/tmp/t" });
  });

  it("accepts the variable names as flags", () => {
    expect(readSettings(["--CAPVAULT_DISK_ROOT=/srv/notes", "--PORT", "1234"], {})).toMatchObject({
      diskRoot: "/srv/notes",
      port: 1234,
      diskRootGiven: true,
    });
  });

  it("refuses bad values and unknown flags", () => {
    for (const argv of [
      ["--port", "99999"],
      ["--port", "x"],
      ["--max-file-bytes", "0"],
      ["--public-url", "https://x/a/b"],
      ["--nope"],
      ["extra"],
    ]) {
      expect(() => readSettings(argv, {}), argv.join(" ")).toThrow(SettingsError);
    }
  });

  it("never lets a request's Host header choose the origin of minted URLs", () => {
    expect(readSettings(["--host", "10.1.2.3", "--port", "9000"], {})).toMatchObject({
      publicUrl: "http://10.1.2.3:9000",
    });
    expect(readSettings(["--host", "::1"], {})).toMatchObject({ publicUrl: "http://[::1]:8787" });
    // Listening everywhere, or on a port not known yet, has no one origin to guess.
    for (const argv of [
      ["--host", "0.0.0.0"],
      ["--host", "::"],
      ["--port", "0"],
    ]) {
      expect(() => readSettings(argv, {}), argv.join(" ")).toThrow(/--public-url/);
    }
  });

  it("refuses short admin tokens and warns where a given one is readable by others", () => {
    expect(() => readSettings(["--admin-token", "short"], {})).toThrow(SettingsError);
    const long = "x".repeat(40);
    const flag = readSettings(["--admin-token", long], {});
    expect(flag !== "help" && flag.warnings.join(" ")).toMatch(/process list/);
    const env = readSettings([], { CAPVAULT_ADMIN_TOKEN: long });
    expect(env !== "help" && env.warnings.join(" ")).toMatch(/environ/);
    expect(readSettings(["--admin-token-file", "/run/secrets/t"], {})).toMatchObject({
      adminToken: null,
      adminTokenFile: "/run/secrets/t",
      warnings: [],
    });
  });

  it("answers --help", () => {
    expect(readSettings(["--help"], {})).toBe("help");
  });

  it("answers `npm start --port N` (npm took the flag) with the two commands that work", () => {
    expect(() => readSettings(["8788"], { npm_config_port: "true" })).toThrow(
      /Unexpected argument '8788'.*`npm start -- --port 8788` or `PORT=8788 npm start`/,
    );
  });
});
