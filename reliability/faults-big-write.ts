import { createHash } from "node:crypto";
import type { Backend } from "../shared/wire-types.ts";
import type { Findings } from "./findings.ts";
import { call, header } from "./http-call.ts";
import { listNames } from "./vault-files.ts";
import { type Fixture, put } from "./vault-fixture.ts";

const CHUNK = 1024 * 1024;
const OLD = "the old content of the big file, which must survive a torn overwrite\n";

/** Chunk `i` of the new content: distinct per chunk, so a reordered or torn file cannot hash right. */
function chunk(i: number): Uint8Array {
  const bytes = new Uint8Array(CHUNK).fill(i % 251);
  bytes.set(new TextEncoder().encode(`chunk ${i}\n`));
  return bytes;
}

function md5(parts: Iterable<Uint8Array>): string {
  const hash = createHash("md5");
  for (const part of parts) hash.update(part);
  return hash.digest("hex");
}

/**
 * A big overwrite (256 MiB at full size) cut by the kill once about half of
 * it has been sent. After the restart the file must hash to the old content
 * or the new, by its etag and by its bytes, and its folder must list only it.
 */
export function bigWriteFault(fixture: Fixture, backend: Backend, bytes: number) {
  const chunks = Math.ceil(bytes / CHUNK);
  const target = "fault-big/big.bin";
  const cap = fixture.roots[backend].url;
  let sent = 0;
  let inFlight: Promise<unknown> = Promise.resolve();
  const newMd5 = md5(
    (function* () {
      for (let i = 0; i < chunks; i++) yield chunk(i);
    })(),
  );
  const oldMd5 = md5([new TextEncoder().encode(OLD)]);
  return {
    prepare: () => put(cap, target, OLD),
    start(): void {
      let i = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (i === chunks) return controller.close();
          const next = chunk(i++);
          sent += next.length;
          controller.enqueue(next);
        },
      });
      inFlight = call(
        `${cap}/file?path=${encodeURIComponent(target)}`,
        { method: "PUT", body, headers: { "content-length": String(chunks * CHUNK) }, duplex: "half" } as RequestInit,
        600_000,
      );
    },
    /** Resolves once half the body is on its way: the moment to kill. */
    async halfSent(): Promise<void> {
      const deadline = Date.now() + 300_000;
      while (sent < (chunks * CHUNK) / 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    },
    async verify(findings: Findings): Promise<"old" | "new" | "torn"> {
      await inFlight;
      const stat = await call(`${cap}/stat?path=${encodeURIComponent(target)}`);
      const etag = (JSON.parse(new TextDecoder().decode(stat.body) || "{}") as { etag?: string }).etag;
      const read = await fetch(`${cap}/file?path=${encodeURIComponent(target)}`, {
        signal: AbortSignal.timeout(600_000),
      });
      const hash = createHash("md5");
      for await (const part of read.body ?? []) hash.update(part as Uint8Array);
      const got = hash.digest("hex");
      const names = await listNames(cap, "fault-big");
      if (JSON.stringify(names) !== '["big.bin"]')
        findings.add("other", `${backend} fault-big lists ${JSON.stringify(names)} after the kill`);
      const which = got === oldMd5 ? "old" : got === newMd5 ? "new" : "torn";
      if (
        which === "torn" ||
        etag !== got ||
        header({ status: 0, headers: [...read.headers], body: new Uint8Array() }, "etag") !== `"${got}"`
      ) {
        findings.add(
          "other",
          `${backend} big file after the kill: bytes md5 ${got}, stat etag ${etag}; old ${oldMd5}, new ${newMd5}`,
        );
      }
      return which;
    },
  };
}
