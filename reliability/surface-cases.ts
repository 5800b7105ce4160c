import fc from "fast-check";
import type { KnownVersion, Role, SurfaceTarget } from "./surface-target.ts";

/** Roles as the cases pick them: mostly caps that work, every right alone, and dead tokens. */
export const role: fc.Arbitrary<Role> = fc.oneof(
  { weight: 6, arbitrary: fc.constant<Role>("root") },
  { weight: 6, arbitrary: fc.constantFrom<Role>("child", "readOnly", "writeOnly", "listOnly", "deleteOnly") },
  { weight: 1, arbitrary: fc.constantFrom<Role>("revoked", "unknown") },
);

/** A version id: one the run knows by name, a small counter value (ids are guessable), or a hostile string. */
export type VersionPick = { known: KnownVersion } | { literal: string };

export const versionId: fc.Arbitrary<VersionPick> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom<KnownVersion>("hidden", "a", "b").map((known) => ({ known })) },
  { weight: 4, arbitrary: fc.integer({ min: 0, max: 60 }).map((n) => ({ literal: String(n) })) },
  {
    weight: 2,
    arbitrary: fc
      .oneof(
        fc.constantFrom(
          "",
          "-1",
          "1e3",
          " 1",
          "01",
          "0x1",
          "9".repeat(30),
          "9007199254740993",
          "1.5",
          "abc",
          "..",
          "%2e%2e",
          "%00",
          "1%2f..%2f2",
          "__proto__",
          "constructor",
          "x".repeat(5000),
        ),
        fc.string({ maxLength: 12 }),
      )
      .map((literal) => ({ literal })),
  },
);

/** The id as text (before any URL encoding). */
export function versionText(target: SurfaceTarget, pick: VersionPick): string {
  return "known" in pick ? target.versions[pick.known] : pick.literal;
}

/** A path segment or query value as a client would put it in a URL (a lone surrogate is sent as U+FFFD, as a browser's URL does). */
export const segment = (value: string) => encodeURIComponent(value.toWellFormed());
