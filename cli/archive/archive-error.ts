import { LocalRefusal } from "../transfer/local-refusal.ts";

/**
 * Why an archive cannot be imported (or written), found before anything is
 * sent: a typed code on stderr (and in `--json`), exit code 1. Messages
 * never hold the passphrase, the token key or a host path.
 */
export class ArchiveError extends LocalRefusal {
  constructor(
    code:
      | "archive_truncated"
      | "archive_corrupt"
      | "archive_too_new"
      | "not_an_archive"
      | "wrong_passphrase"
      | "passphrase_required"
      | "key_mismatch"
      | "vault_not_empty"
      | "merge_conflict"
      | "local_error",
    message: string,
  ) {
    super(code, message);
    this.name = "ArchiveError";
  }
}
