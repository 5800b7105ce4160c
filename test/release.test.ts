/**
 * One release number (shared/state-format.ts RELEASE) everywhere a user or a
 * package registry reads one: a bump that misses a place fails here.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { RELEASE } from "../shared/state-format.ts";

const root = path.resolve(import.meta.dirname, "..");
const read = (file: string) => readFileSync(path.join(root, file), "utf8");

describe("the release", () => {
  it("is semantic, and the same in the npm packages, the Python package and the lockfile", () => {
    expect(RELEASE).toMatch(/^\d+\.\d+\.\d+$/);
    expect(JSON.parse(read("package.json")).version).toBe(RELEASE);
    expect(JSON.parse(read("packages/capvault/package.json")).version).toBe(RELEASE);
    expect(JSON.parse(read("package-lock.json")).version).toBe(RELEASE);
    expect(read("clients/python/pyproject.toml")).toMatch(new RegExp(`^version = "${RELEASE}"$`, "m"));
    expect(read("clients/python/capvault/_fs_cap.py")).toContain(`__version__ = "${RELEASE}"`);
  });
});
