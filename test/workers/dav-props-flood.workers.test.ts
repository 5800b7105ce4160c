import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import {
  MAX_DAV_PROP_CAP_BYTES,
  MAX_DAV_PROPS_PER_RESOURCE,
  type PropOp,
} from "../../durable-objects/cap-dav-props.ts";
import { capObjectStub } from "../../durable-objects/object-stubs.ts";
import { digestToken } from "../../shared/token.ts";
import { call, cap, mintRoot } from "./vault.ts";

// A PROPPATCH flood spends at most the cap's 16 MiB of dead properties, then
// is answered 507 inside a 207 with nothing applied. The flood is poured into
// the cap's object directly (about 130 RPCs of 128 KiB) rather than as
// 400 XML requests over a socket, which took a minute under CI's load beside
// litmus; the last step, the one a client sees, goes through WebDAV's route.

const NS = "urn:capvault-test:";
const value = "x".repeat(4000);
const fill = (r: number): PropOp[] =>
  Array.from({ length: MAX_DAV_PROPS_PER_RESOURCE }, (_, i) => ({ op: "set", ns: NS, name: `f${r}-${i}`, xml: value }));
const patchBody = (name: string) =>
  `<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:" xmlns:t="${NS}">` +
  `<D:set><D:prop><t:${name}>${value}</t:${name}></D:prop></D:set></D:propertyupdate>`;

describe("WebDAV dead properties past the cap's bytes", () => {
  it("refuses the patch that would pass the bound whole (507, nothing applied), and a delete frees room", async () => {
    const c = cap((await mintRoot("dav-props-flood/")).token);
    const stub = capObjectStub(env, (await digestToken(c.token)).key) as never as {
      davPatchProps(
        path: string,
        ops: PropOp[],
      ): Promise<{ ok: boolean; value?: { applied: boolean; full?: boolean } }>;
    };
    const perResource = MAX_DAV_PROPS_PER_RESOURCE * (NS.length + "f000-00".length + value.length);
    const room = Math.floor(MAX_DAV_PROP_CAP_BYTES / perResource);
    expect(room).toBeGreaterThan(100);
    for (let r = 0; r < room; r++) {
      const patched = await stub.davPatchProps(`p/f${r}`, fill(r));
      expect(patched.ok && patched.value).toEqual({ applied: true });
    }
    // The next resource's patch does not fit: refused whole, marked full.
    const over = await stub.davPatchProps(`p/f${room}`, fill(room));
    expect(over.ok && over.value).toMatchObject({ applied: false, full: true });

    // Through WebDAV: a 207 whose only status is 507, with the reason, and a later PROPFIND finds nothing set.
    expect((await c.write("p/last", "")).status).toBe(201);
    expect((await c.write("p/f0", "")).status).toBe(201);
    // Fill the little room left so that even one more value is past the bound.
    for (let i = 0; ; i++) {
      const small = await stub.davPatchProps(`p/pad${i}`, [{ op: "set", ns: NS, name: "pad", xml: value }]);
      if (!(small.ok && small.value?.applied)) break;
    }
    const refused = await call("PROPPATCH", `/object/${c.token}/dav/p/last`, { body: patchBody("late") });
    const text = await refused.text();
    expect(refused.status).toBe(207);
    expect(text).toContain("507 Insufficient Storage");
    expect(text).not.toContain("200 OK");
    const found = await call("PROPFIND", `/object/${c.token}/dav/p/last`, {
      headers: { depth: "0" },
      body: `<?xml version="1.0"?><D:propfind xmlns:D="DAV:"><D:prop><late xmlns="${NS}"/></D:prop></D:propfind>`,
    });
    expect(await found.text()).toContain("404 Not Found");

    // Deleting a resource over WebDAV drops its properties and frees their room: the same patch then goes through.
    expect((await call("DELETE", `/object/${c.token}/dav/p/f0`)).status).toBe(204);
    const again = await call("PROPPATCH", `/object/${c.token}/dav/p/last`, { body: patchBody("late") });
    expect(await again.text()).toContain("200 OK");
  });
});
