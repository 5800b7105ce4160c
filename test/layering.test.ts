import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { checkLayering, HARNESS, MAY_IMPORT, repositorySources, typeCycles } from "./layering.ts";

const repo = fileURLToPath(new URL("..", import.meta.url));
const sources = repositorySources(repo);

describe("layering", () => {
  it("folders import downward only, type-only imports included, and no files import each other's values in a cycle", () => {
    expect(checkLayering(sources)).toEqual([]);
  });

  it("files reach each other through types only where an object's env names the object classes, or a refusal's text names rights", () => {
    // The env declares each Durable Object namespace with its class, and the classes read the env: a cycle
    // TypeScript needs. A refusal's parameters are typed by the rights they name, and parsing rights refuses.
    const unexpected = typeCycles(sources).filter(
      (cycle) =>
        !(cycle.includes("durable-objects/object-env.ts") && cycle.every((f) => f.startsWith("durable-objects/"))) &&
        cycle.join() !== "shared/refusals.ts,shared/rights.ts",
    );
    expect(unexpected).toEqual([]);
  });

  it("every top-level folder of TypeScript is placed in the rule", () => {
    const folders = new Set([...sources.keys()].filter((f) => f.includes("/")).map((f) => f.split("/")[0]!));
    const unplaced = [...folders].filter((f) => !(f in MAY_IMPORT) && !HARNESS.has(f));
    expect(unplaced).toEqual([]);
  });

  it("names a planted upward import, a type-only one, and a planted value cycle", () => {
    const planted = new Map(sources);
    planted.set("shared/planted.ts", 'import { app } from "../worker/app.ts";\nexport const x = app;\n');
    planted.set("storage-adapters/planted.ts", 'import type { CapObject } from "../durable-objects/cap-object.ts";\n');
    planted.set("shared/cycle-a.ts", 'import { b } from "./cycle-b.ts";\nexport const a = b;\n');
    planted.set("shared/cycle-b.ts", 'import { a } from "./cycle-a.ts";\nexport const b = () => a;\n');
    expect(checkLayering(planted)).toEqual([
      { kind: "upward", detail: "shared/planted.ts -> worker/app.ts" },
      { kind: "upward", detail: "storage-adapters/planted.ts -> durable-objects/cap-object.ts (type-only)" },
      { kind: "cycle", detail: "shared/cycle-a.ts -> shared/cycle-b.ts" },
    ]);
  });

  it("a type-only cycle is no value cycle, and a dynamic import counts as a value import", () => {
    const types = new Map([
      ["shared/t1.ts", 'import type { B } from "./t2.ts";\nexport type A = B;\n'],
      ["shared/t2.ts", 'import { type A } from "./t1.ts";\nexport type B = A;\n'],
    ]);
    expect(checkLayering(types)).toEqual([]);
    const dynamic = new Map([
      ["shared/d1.ts", 'export const load = () => import("./d2.ts");\n'],
      ["shared/d2.ts", 'import { load } from "./d1.ts";\nexport const again = load;\n'],
    ]);
    expect(checkLayering(dynamic)).toEqual([{ kind: "cycle", detail: "shared/d1.ts -> shared/d2.ts" }]);
  });
});
