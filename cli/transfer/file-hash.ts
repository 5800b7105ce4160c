import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";

/** Hex digest of a local file, streamed (never read whole into memory). */
export async function hashFile(file: string, algorithm: "md5" | "sha256"): Promise<string> {
  const hash = createHash(algorithm);
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}
