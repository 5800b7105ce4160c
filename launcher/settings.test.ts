import path from "node:path";
import { describe, expect, it } from "vitest";
import { readSettings, SettingsError } from "./settings.ts";

describe("readSettings", () => {
  it("has the documented defaults", () => {
    const s = readSettings([], {});
    expect(s).toMatchObject({ port: 8787, host: "127.0.0.1", adminToken: null, publicUrl: null, maxFileBytes: null, diskRootGiven: false });
    expect(s !== "help" && s.state).toBe(path.resolve(".capvault"));
    expect(s !== "help" && s.diskRoot).toBe(path.resolve("vault-data"));
  });

  it("reads the environment, and flags win over it", () => {
    const env = { PORT: "9000", HOST: "0.0.0.0", CAPVAULT_STATE: "/tmp/s", CAPVAULT_MAX_FILE_BYTES: "10", CAPVAULT_DISK_ROOT: "~/notes", HOME: "/home/a" };
    expect(readSettings([], env)).toMatchObject({ port: 9000, host: "0.0.0.0", state: "/tmp/s", maxFileBytes: 10, diskRoot: "/home/a/notes", diskRootGiven: true });
    expect(readSettings(["--port", "9100", "--state=/tmp/t"], env)).toMatchObject({ port: 9100, state: "/tmp/t" });
  });

  it("accepts the variable names as flags", () => {
    expect(readSettings(["--CAPVAULT_DISK_ROOT=/srv/notes", "--PORT", "1234"], {})).toMatchObject({ diskRoot: "/srv/notes", port: 1234, diskRootGiven: true });
  });

  it("refuses bad values and unknown flags", () => {
    for (const argv of [["--port", "99999"], ["--port", "x"], ["--max-file-bytes", "0"], ["--public-url", "https://x/a/b"], ["--nope"], ["extra"]]) {
      expect(() => readSettings(argv, {}), argv.join(" ")).toThrow(SettingsError);
    }
  });

  it("answers --help", () => {
    expect(readSettings(["--help"], {})).toBe("help");
  });
});
