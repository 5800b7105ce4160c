import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { capObjectStub } from "../../durable-objects/object-stubs.ts";
import { digestToken } from "../../shared/token.ts";
import { app } from "../../worker/app.ts";
import { ADMIN, cap, mintRoot } from "./vault.ts";

/**
 * When the launcher recorded when the vault left state format 0
 * (`CAPVAULT_FORMAT0_UNTIL`), `POST /admin/reissue-legacy` must not take a
 * later `mintedBefore`: caps minted with signed tokens before depths were
 * recorded have format 0's nine fields, and a re-issue wipes the old object,
 * so the working signed token would open nothing.
 */

const FORMAT0_FIELDS = ["id", "key", "backend", "root", "rights", "label", "createdAt", "expiresAt", "parent"];

describe("reissue-legacy and the recorded cutoff", () => {
  it("refuses a mintedBefore later than the recorded cutoff, and leaves a signed cap of format 0's shape alone", async () => {
    const recorded = Date.now() - 3_600_000;
    const signed = await mintRoot("rt-reissue-signed/");
    // A signed cap minted before depths were recorded: format 0's nine fields.
    const { key } = await digestToken(signed.token);
    await runInDurableObject(capObjectStub(env, key), async (_instance, state) => {
      const record = (await state.storage.get<Record<string, unknown>>("cap"))!;
      await state.storage.put("cap", Object.fromEntries(FORMAT0_FIELDS.map((f) => [f, record[f]])));
    });
    expect((await cap(signed.token).info()).status).toBe(200);

    const withCutoff = { ...env, CAPVAULT_FORMAT0_UNTIL: String(recorded) };
    const step = (json: unknown) =>
      app.fetch(
        new Request("https://vault.test/admin/reissue-legacy", {
          method: "POST",
          headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
          body: JSON.stringify(json),
        }),
        withCutoff,
      );
    const late = await step({ mintedBefore: new Date().toISOString() });
    expect(late.status).toBe(400);
    // A run to the end under the recorded cutoff touches nothing newer.
    let ack: string[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await step({ ack });
      expect(res.status).toBe(200);
      const answer = (await res.json()) as { reissued: { oldId: string }[]; done: boolean };
      expect(answer.reissued.map((r) => r.oldId)).not.toContain(signed.id);
      ack = answer.reissued.map((r) => r.oldId);
      if (answer.done) break;
    }
    expect((await cap(signed.token).info()).status).toBe(200);
  });
});
