import { describe, expect, it } from "vitest";
import { cap, child, errorCode, mintRoot } from "./vault.ts";

describe("smoke", () => {
  it("mints, writes, reads, subdirs", async () => {
    const root = cap((await mintRoot("smoke/")).token);
    expect((await root.write("skills/hermes-fs-as-cap/SKILL.md", "hello")).status).toBe(201);
    const res = await root.read("skills/hermes-fs-as-cap/SKILL.md");
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("hello");
    expect(await errorCode(await root.read("../../../etc/passwd"))).toBe("path_escapes");
    const sub = await child(root, { path: "skills" });
    expect(await (await sub.read("hermes-fs-as-cap/SKILL.md")).text()).toBe("hello");
    expect(await errorCode(await sub.read("../other-skill/SKILL.md"))).toBe("path_escapes");
  });
});
