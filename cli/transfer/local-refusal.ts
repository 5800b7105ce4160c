/**
 * A local reason not to touch a file, with a code like the vault's so a
 * transfer report has one shape. `symlink`: a link stands where a download
 * would write (it is never followed or replaced); `not_a_folder` / `is_folder`:
 * the local tree disagrees with the remote one; `integrity`: the bytes that
 * arrived are not the ones the vault described.
 */
/** Why a vault archive cannot be imported (cli/archive/archive-error.ts): checked before anything is sent. */
export type ArchiveRefusalCode =
  | "archive_truncated"
  | "archive_corrupt"
  | "archive_too_new"
  | "not_an_archive"
  | "wrong_passphrase"
  | "passphrase_required"
  | "key_mismatch"
  | "vault_not_empty"
  | "merge_conflict";

export class LocalRefusal extends Error {
  readonly code:
    | "symlink"
    | "not_a_folder"
    | "not_a_file"
    | "is_folder"
    | "integrity"
    | "local_error"
    // A vault archive that cannot be imported (cli/archive/archive-error.ts).
    | ArchiveRefusalCode;

  constructor(code: LocalRefusal["code"], message: string) {
    super(message);
    this.name = "LocalRefusal";
    this.code = code;
  }
}

/** An fs error as a LocalRefusal: its errno code only, never a host path beyond what the user typed. */
export function localFailure(error: unknown): LocalRefusal {
  if (error instanceof LocalRefusal) return error;
  const code = (error as NodeJS.ErrnoException).code ?? "error";
  return new LocalRefusal("local_error", `local file system: ${code}`);
}
