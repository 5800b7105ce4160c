import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

// The README is the front door and the reference lives in docs/: a link to a moved or renamed page must fail here.
const ROOT = path.resolve(import.meta.dirname, "..");
const PAGES = [
  "README.md",
  "CONTRIBUTING.md",
  "CHANGELOG.md",
  ...readdirSync(path.join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];

/** GitHub's heading anchors: lower case, punctuation other than - and _ dropped, spaces to dashes. */
function anchorsOf(text: string): Set<string> {
  const prose = text.replace(/```[\s\S]*?```/g, "");
  const found = new Set<string>();
  for (const m of prose.matchAll(/^#+\s+(.*)$/gm)) {
    found.add(
      (m[1] ?? "")
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N}_\- ]/gu, "")
        .replaceAll(" ", "-"),
    );
  }
  return found;
}

describe("documentation links", () => {
  it.each(PAGES)("every relative link in %s names a file (and heading) that exists", (page) => {
    const text = readFileSync(path.join(ROOT, page), "utf8");
    const broken: string[] = [];
    for (const [, target = ""] of text.replace(/```[\s\S]*?```/g, "").matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target)) continue;
      const [file = "", anchor] = target.split("#");
      const dest = file ? path.join(ROOT, path.dirname(page), file) : path.join(ROOT, page);
      if (!existsSync(dest)) broken.push(target);
      else if (anchor && dest.endsWith(".md") && !anchorsOf(readFileSync(dest, "utf8")).has(anchor))
        broken.push(target);
    }
    expect(broken).toEqual([]);
  });
});
