import { describe, expect, it } from "vitest";
import { tricklePut, uploadsRunning } from "./slow-upload.ts";
import { cap, child, errorCode, mintRoot } from "./vault.ts";

/**
 * Revocation cuts uploads; it does not wait for them to end. A client that
 * trickles bytes never trips storage's idle timeout, so a revocation that
 * only waited would be held open by it and answer after the body was whole:
 * the upload would land through a revoked cap. Judged by order (what had
 * happened when the revocation answered), not by how long anything took.
 */
let counter = 0;
const SLOW = 60_000; // the trickles take seconds to end when nothing cuts them

describe.each(["r2", "disk"] as const)("%s backend: trickling uploads and revocation", (backend) => {
  it(
    "the revocation cuts trickling uploads through the cap and its child, and answers before any trickle ends",
    async () => {
      const prefix = `trickle/${backend}/${++counter}/`;
      const observer = cap((await mintRoot(prefix, { backend })).token);
      const revoked = cap((await mintRoot(prefix, { backend })).token);
      const kid = await child(revoked, { path: "kid" });
      const uploads = [tricklePut(revoked.token, "a.bin"), tricklePut(kid.token, "b.bin")];
      await uploadsRunning(revoked.token);
      await uploadsRunning(kid.token);

      const events: string[] = [];
      uploads.forEach((u, i) => {
        void u.ended.then((how) => events.push(`trickle ${i} ${how}`));
        void u.response.then((r) => events.push(`upload ${i} answered ${r.status}`));
      });
      const revocation = await revoked.revoke();
      const whenRevoked = [...events];
      expect(revocation.status).toBe(204);
      // Nothing had reached the end of its body: the revocation did not wait for a trickle.
      expect(whenRevoked.filter((e) => e.endsWith("completed"))).toEqual([]);
      // An upload may answer after the revocation (its answer is not what the
      // revocation waits for), but none had been stored by then.
      expect(whenRevoked.filter((e) => / answered 2/.test(e))).toEqual([]);

      for (const u of uploads) expect(await errorCode(await u.response)).toBe("no_such_cap");
      for (const path of ["a.bin", "kid/b.bin"]) expect(await errorCode(await observer.read(path))).toBe("not_found");
      // Still nothing once every body went as far as it could.
      expect(await Promise.all(uploads.map((u) => u.ended))).not.toContain("completed");
      for (const path of ["a.bin", "kid/b.bin"]) expect(await errorCode(await observer.read(path))).toBe("not_found");
    },
    SLOW,
  );
});
