import { hashFile } from "./file-hash.ts";
import type { WalkedFile } from "./tree-types.ts";

/**
 * Whether the local file already holds the bytes of the remote one, so the
 * transfer can be skipped. Sizes first (free); then a hash of the local file
 * against one the vault gave: its SHA-256 when the listing carries one, else
 * its etag, which the vault defines as the plain MD5 of the bytes. No hash
 * from the vault (a cap without `read` sees no etag) means "changed": a skip
 * must be proven, never guessed from size or time alone.
 */
export async function sameContent(localFile: string, localSize: number, remote: WalkedFile): Promise<boolean> {
  if (localSize !== remote.size) return false;
  if (remote.sha256 !== undefined) return (await hashFile(localFile, "sha256")) === remote.sha256.toLowerCase();
  if (remote.etag !== undefined) return (await hashFile(localFile, "md5")) === stripQuotes(remote.etag).toLowerCase();
  return false;
}

function stripQuotes(etag: string): string {
  return etag.replace(/^(W\/)?"(.*)"$/, "$2");
}
