/**
 * How the CLI reads a remote path typed by a person. The vault's own parser
 * stays the judge of every path: this only maps the spellings people use for
 * "the cap's root" (`.`, `./`, `/`, as in sftp) to the empty path the vault
 * means by it, and joins relative names. Anything else travels unchanged,
 * so `/etc/passwd` still reaches the vault and is refused as absolute.
 */
const ROOT_SPELLINGS = new Set(["", ".", "./", "/"]);

export function remotePathArg(text: string): string {
  return ROOT_SPELLINGS.has(text) ? "" : text;
}

/** In cp and sync, a remote side is written `:PATH` (rclone's `remote:path`, the remote being the cap). */
export function isRemoteSpec(text: string): boolean {
  return text.startsWith(":");
}

/** `:notes` → `notes`; `:`, `:.` and `:/` → the root. */
export function remoteSpecPath(text: string): string {
  return remotePathArg(text.slice(1));
}

/** The folder-ish spelling: a trailing `/`, or the root. */
export function namesFolder(text: string): boolean {
  return text === "" || text.endsWith("/");
}

/** `notes/` + `a.md` → `notes/a.md`; the root + `a.md` → `a.md`. */
export function joinRemote(base: string, relative: string): string {
  const trimmed = base.endsWith("/") ? base.slice(0, -1) : base;
  if (trimmed === "") return relative;
  return relative === "" ? trimmed : `${trimmed}/${relative}`;
}

/** The last segment: `notes/a.md` → `a.md`, `notes/` → `notes`, the root → "". */
export function remoteBaseName(path: string): string {
  const trimmed = path.endsWith("/") ? path.slice(0, -1) : path;
  return trimmed.slice(trimmed.lastIndexOf("/") + 1);
}
