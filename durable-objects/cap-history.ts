import { contentTypeOf } from "../shared/content-type.ts";
import { ok, type Result } from "../shared/result.ts";
import type { VersionPage, WriteResult } from "../shared/wire-types.ts";
import { DEFAULT_CONTENT_TYPE } from "../storage-adapters/storage-adapter.ts";
import type { CapAudit } from "./cap-audit.ts";
import { type CapAuthorize, noSuchCap } from "./cap-authorize.ts";
import type { CapFiles } from "./cap-files.ts";
import type { CapHost } from "./cap-host.ts";
import type { CapRevocation } from "./cap-revocation.ts";
import {
  redactVersion,
  type VersionBody,
  versionBytes,
  versionPage,
  versionPageRequest,
  watchThrough,
} from "./cap-versions.ts";
import { grantWatchSocket, type WatchSocketGrant } from "./cap-watch-socket.ts";

/**
 * A cap's version history and change feeds, as its holder asks for them: each
 * admitted by the chokepoint, then answered by the root's journal
 * (durable-objects/cap-versions.ts, cap-watch-socket.ts, root-journal.ts).
 */
export class CapHistory {
  constructor(
    private readonly host: CapHost,
    private readonly gate: CapAuthorize,
    private readonly audit: CapAudit,
    private readonly files: CapFiles,
    private readonly revocation: CapRevocation,
  ) {}

  async listVersions(rawPath: string | null, rawCursor: string | null, rawLimit: string | null) {
    return this.audit.run("versions", rawPath, async (): Promise<Result<VersionPage>> => {
      const access = await this.gate.authorize(
        { rights: ["read"] },
        { kind: "file", raw: [rawPath], judge: () => versionPageRequest(rawCursor, rawLimit) },
      );
      if (!access.ok) return access;
      const { cap, paths, judged } = access.value;
      return versionPage(this.host.env, cap, paths[0], judged);
    });
  }

  async readVersion(rawId: string): Promise<Result<VersionBody>> {
    return this.audit.run("read_version", rawId, async () => {
      const access = await this.gate.authorize({ rights: ["read"] });
      return access.ok ? versionBytes(this.host.env, access.value.cap, rawId) : access;
    });
  }

  /**
   * Writes a version's bytes back to its path through the normal write path: rights, audit, a new version.
   * Also answers that path (relative to this cap), so a tool can say what it restored.
   */
  async restoreVersion(rawId: string): Promise<Result<WriteResult & { path: string }>> {
    // Read as well: the answer's hashes and path describe the old bytes, which a write-only cap may not learn.
    const access = await this.gate.authorize({ rights: ["read", "write"] });
    if (!access.ok) return access;
    const found = await versionBytes(this.host.env, access.value.cap, rawId);
    if (!found.ok) return found;
    const { path, size, contentType: kept, body } = found.value;
    // A type stored before types were checked is restored as the default rather than refused.
    const contentType = contentTypeOf(kept, DEFAULT_CONTENT_TYPE).ok ? kept : null;
    const written = await this.files.writeFile(path, body, { length: size, contentType });
    return written.ok ? ok({ ...written.value, path }) : written;
  }

  async redactVersion(rawId: string): Promise<Result<null>> {
    return this.audit.run("redact", rawId, async () => {
      const access = await this.gate.authorize({ rights: ["delete"] });
      return access.ok ? redactVersion(this.host.env, access.value.cap, rawId) : access;
    });
  }

  /** The change feed of this cap's subtree, from the root's journal; closed when the cap is revoked or expires. */
  async watch(rawSince: string | null): Promise<Result<ReadableStream<Uint8Array>>> {
    const access = await this.gate.authorize({ rights: ["read"] });
    if (!access.ok) return access;
    const opened = await watchThrough(this.host.env, access.value.cap, rawSince, this.revocation.watches);
    if (!opened.ok) return opened;
    // Revoked while the feed was being opened: the cascade may have missed it.
    if (!(await this.gate.live())) {
      opened.value.close();
      return noSuchCap();
    }
    return ok(opened.value.stream);
  }

  /** A WebSocket watcher of this cap's subtree, for the worker to hand to the root's journal (cap-watch-socket.ts). */
  async watchSocket(rawSince: string | null): Promise<Result<WatchSocketGrant>> {
    const access = await this.gate.authorize({ rights: ["read"] });
    if (!access.ok) return access;
    return grantWatchSocket(this.host.env, this.host.storage, access.value.cap, rawSince);
  }
}
