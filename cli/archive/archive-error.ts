import { type ArchiveRefusalCode, LocalRefusal } from "../transfer/local-refusal.ts";

/**
 * Why an archive cannot be imported (or written), found before anything is
 * sent: a typed code on stderr (and in `--json`), exit code 1. Messages
 * never hold the passphrase, the token key or a host path.
 */
export class ArchiveError extends LocalRefusal {
  constructor(code: ArchiveRefusalCode | "local_error", message: string) {
    super(code, message);
    this.name = "ArchiveError";
  }
}
