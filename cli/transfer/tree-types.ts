/** A file as a walk found it, keyed elsewhere by its path relative to the walk's root (`a/b.txt`). */
export interface WalkedFile {
  size: number;
  /** The vault's etag: the hex MD5 of the bytes (remote side, caps with `read`). */
  etag?: string;
  /** Hex SHA-256, when the vault's listing carries one. */
  sha256?: string;
}

/** Something a walk or a transfer could not do; the rest goes on. */
export interface TransferIssue {
  path: string;
  code: string;
  message: string;
}

export interface WalkResult {
  files: Map<string, WalkedFile>;
  /** Folders seen, relative (the root is not listed). */
  dirs: Set<string>;
  /** Entries skipped; a sync with any issue deletes nothing. */
  issues: TransferIssue[];
  /** Local walks only: symlinks and special files found and left alone. */
  skippedLocal?: string[];
}

/** `a` + `b.txt` → `a/b.txt`; the root is "". */
export function childPath(parent: string, name: string): string {
  return parent === "" ? name : `${parent}/${name}`;
}
