import type { Findings } from "./findings.ts";
import { call, text } from "./http-call.ts";
import { listNames } from "./vault-files.ts";
import { BACKENDS, type Fixture, put } from "./vault-fixture.ts";

const FILES_PER_BACKEND = 16;
const SIZE = 96 * 1024;

const content = (tag: string, i: number) => `${tag} ${i} `.padEnd(SIZE, tag === "old" ? "o" : "n");

/**
 * Small writes caught by the kill: each backend holds FILES_PER_BACKEND files
 * of old content, all being overwritten at once when the launcher dies.
 * `start` writes the old content and fires the overwrites; `verify` (after
 * the restart) wants every file old or new, never torn, and a listing with
 * exactly those names: no temp, no leftover.
 */
export function smallWritesFault(fixture: Fixture, round: number) {
  const folder = `fault-small-${round}`;
  const file = (i: number) => `${folder}/f${String(i).padStart(2, "0")}.txt`;
  let inFlight: Promise<unknown>[] = [];
  return {
    async prepare(): Promise<void> {
      for (const backend of BACKENDS) {
        for (let i = 0; i < FILES_PER_BACKEND; i++) await put(fixture.roots[backend].url, file(i), content("old", i));
      }
    },
    start(): void {
      inFlight = BACKENDS.flatMap((backend) =>
        Array.from({ length: FILES_PER_BACKEND }, (_, i) =>
          call(`${fixture.roots[backend].url}/file?path=${encodeURIComponent(file(i))}`, {
            method: "PUT",
            body: content("new", i),
          }),
        ),
      );
    },
    /** Resolves when the first overwrite was answered: the others are then still on their way. */
    firstAnswered: (): Promise<unknown> => Promise.race(inFlight),
    async verify(findings: Findings): Promise<{ old: number; new: number }> {
      await Promise.all(inFlight);
      const seen = { old: 0, new: 0 };
      for (const backend of BACKENDS) {
        const cap = fixture.roots[backend].url;
        for (let i = 0; i < FILES_PER_BACKEND; i++) {
          const read = await call(`${cap}/file?path=${encodeURIComponent(file(i))}`);
          const body = text(read);
          if (read.status === 200 && body === content("old", i)) seen.old++;
          else if (read.status === 200 && body === content("new", i)) seen.new++;
          else
            findings.add(
              "other",
              `${backend} ${file(i)} after the kill: ${read.status}, ${body.length} bytes, neither old nor new`,
            );
        }
        const names = await listNames(cap, folder);
        const expected = Array.from({ length: FILES_PER_BACKEND }, (_, i) => file(i).slice(folder.length + 1));
        if (JSON.stringify(names) !== JSON.stringify(expected))
          findings.add("other", `${backend} ${folder} lists ${JSON.stringify(names).slice(0, 200)} after the kill`);
      }
      return seen;
    },
  };
}
