import { compileGlob, type Glob } from "../../shared/glob-compile.ts";
import { GlobMeter, globMatches } from "../../shared/glob-match.ts";
import { WorkspaceFsError } from "./fs-errors.ts";

/**
 * A glob of one workspace call, matched by the vault's one glob engine
 * (shared/glob-compile.ts, as the MCP tools read globs: minimatch's syntax,
 * `dot: true`, never a RegExp), with a step budget of its own, so a hostile
 * pattern costs a bounded amount and then is refused.
 */
export class WorkspaceGlob {
  readonly #glob: Glob;
  readonly #meter = new GlobMeter();

  private constructor(
    glob: Glob,
    private readonly syscall: string,
    private readonly path: string,
  ) {
    this.#glob = glob;
  }

  /** `pattern`, compiled; EINVAL for one past the engine's bounds (length, braces). */
  static of(pattern: string, syscall: string, path: string): WorkspaceGlob {
    const compiled = compileGlob(pattern);
    if (!compiled.ok) throw new WorkspaceFsError("EINVAL", syscall, path, compiled.error.message);
    return new WorkspaceGlob(compiled.value, syscall, path);
  }

  /** Whether `rel` (relative, `/`-separated) matches; E2BIG once this glob's steps are spent. */
  matches(rel: string): boolean {
    const matched = globMatches(this.#glob, rel, this.#meter);
    if (matched === null) throw new WorkspaceFsError("E2BIG", this.syscall, this.path, "the glob took too many steps");
    return matched;
  }
}
