import { randomBytes } from "node:crypto";
import { unlink } from "node:fs/promises";
import { ARCHIVE_FORMAT } from "../../shared/archive-format.ts";
import { ARCHIVE_MAGIC, ArchiveWriter } from "../archive/archive-file.ts";
import { exportPassphrase, PASSPHRASE_OPTIONS } from "../archive/passphrase.ts";
import { Progress } from "../archive/progress.ts";
import { VaultAdmin } from "../archive/vault-admin.ts";
import { ADMIN_TOKEN_FILE_OPTION } from "../cap-source.ts";
import type { CommandSpec } from "../command-spec.ts";
import { printJson } from "../json-output.ts";
import { positionalArgs } from "../option-values.ts";

type Backend = "r2" | "disk";
interface RootRecord {
  id: string;
  key: string;
  backend: Backend;
  prefix: string;
}
interface CapState {
  record: { key: string };
  children: { key: string }[];
}

const JOURNAL_TABLES = ["versions", "inline_blobs", "journal_settings", "quota_files", "quota_kept"];
/** Caps per archive record (and per import call): a cap is at most ~300 KiB of children and audit. */
const CAPS_PER_RECORD = 20;
const CAP_RECORD_BYTES = 2 * 1024 * 1024;

/**
 * `capvault export FILE`: the whole vault into one archive
 * (docs/export-import.md), by many small admin calls, each record written
 * as it arrives: the CLI holds one page or one file's piece at a time.
 */
export const exportCommand: CommandSpec = {
  name: "export",
  summary: "write the whole vault to an archive file (admin)",
  usage: "export FILE [--encrypt] [--passphrase-file PATH | --passphrase-env NAME] [--admin-token-file PATH]",
  description:
    "Writes every cap (same tokens), the tree, files, versions, audit and OAuth grants of the vault at\n" +
    "CAPVAULT_URL into FILE, mode 0600: it holds the vault's token key. --encrypt (or a passphrase option)\n" +
    "encrypts it with a passphrase (scrypt, AES-256-GCM). Each cap is read at one moment; across caps a\n" +
    "live vault promises nothing: stop writers for a vault-wide snapshot. See docs/export-import.md.",
  options: {
    encrypt: { type: "boolean", help: "encrypt with a passphrase asked on the terminal" },
    ...PASSPHRASE_OPTIONS,
    "admin-token-file": ADMIN_TOKEN_FILE_OPTION,
  },
  async run(input) {
    const [file] = positionalArgs(input.positionals, { required: ["FILE"] }, "export") as [string];
    const admin = new VaultAdmin(input, "export");
    const passphrase = await exportPassphrase(input, "export");
    const state = await admin.state();
    const { tokenKey, keyFingerprint } = await admin.get<{ tokenKey: string; keyFingerprint: string }>("/export/key");
    const writer = await ArchiveWriter.create(file, passphrase);
    const progress = new Progress(input.io, "export");
    const counts = { roots: 0, caps: 0, journalRows: 0, blobs: 0, files: 0, bytes: 0, oauth: 0 };
    try {
      await writer.record({
        t: "header",
        magic: ARCHIVE_MAGIC,
        archiveFormat: ARCHIVE_FORMAT,
        stateFormat: state.stateFormat,
        release: state.release,
        archiveId: randomBytes(16).toString("hex"),
        createdAt: new Date().toISOString(),
        keyFingerprint,
      });
      await writer.record({ t: "key", tokenKey });

      const journals = new Map<string, { backend: Backend; prefix: string }>();
      const pending: string[] = [];
      let cursor: string | null = null;
      do {
        const page: { roots: RootRecord[]; cursor: string | null } = await admin.get("/export/roots", { cursor });
        if (page.roots.length > 0) await writer.record({ t: "roots", roots: page.roots });
        for (const root of page.roots) {
          journals.set(`${root.backend}:${root.prefix}`, { backend: root.backend, prefix: root.prefix });
          pending.push(root.key);
        }
        counts.roots += page.roots.length;
        cursor = page.cursor;
      } while (cursor);

      // Depth first from the roots down each cap's child index: objects cannot be listed.
      let batch: CapState[] = [];
      let batchBytes = 0;
      const flush = async () => {
        if (batch.length === 0) return;
        await writer.record({ t: "caps", caps: batch });
        batch = [];
        batchBytes = 0;
      };
      for (let key = pending.pop(); key !== undefined; key = pending.pop()) {
        const cap: CapState | null = await admin.get(`/export/cap/${key}`);
        if (cap === null) continue;
        for (const child of cap.children) pending.push(child.key);
        const size = JSON.stringify(cap).length;
        if (batch.length >= CAPS_PER_RECORD || batchBytes + size > CAP_RECORD_BYTES) await flush();
        batch.push(cap);
        batchBytes += size;
        counts.caps++;
        progress.show(counts);
      }
      await flush();

      for (const { backend, prefix } of journals.values()) {
        for (const table of JOURNAL_TABLES) {
          let after: string | null = null;
          do {
            const page: { rows: unknown[]; next: string | null } = await admin.get("/export/journal", {
              backend,
              prefix,
              table,
              cursor: after,
            });
            if (page.rows.length > 0) await writer.record({ t: "journal", backend, prefix, table, rows: page.rows });
            counts.journalRows += page.rows.length;
            after = page.next;
          } while (after);
        }
        let after: string | null = null;
        do {
          const page: { blobs: { blob: string; path: string }[]; next: string | null } = await admin.get(
            "/export/journal",
            { backend, prefix, table: "blobs", cursor: after },
          );
          for (const { blob, path } of page.blobs) {
            const bytes = await admin.bytes("/export/blob", { backend, blob }).catch((error: { code?: string }) => {
              // Destroyed since the page was read (redacted, pruned): the rows say so already.
              if (error.code === "version_redacted" || error.code === "not_found") return null;
              throw error;
            });
            if (!bytes) continue;
            await writer.record({ t: "blob", backend, prefix, blob, path, len: bytes.length }, bytes.body);
            counts.blobs++;
            counts.bytes += bytes.length;
            progress.show(counts);
          }
          after = page.next;
        } while (after);
        let files: string | null = null;
        do {
          const page: { files: { path: string; blob: string | null }[]; cursor: string | null } = await admin.get(
            "/export/files",
            { backend, prefix, cursor: files },
          );
          for (const { path, blob } of page.files) {
            const bytes = await admin
              .bytes("/export/file", { backend, prefix, path })
              .catch((error: { code?: string }) => {
                // Deleted since it was listed: not part of the moment this root is read at.
                if (error.code === "not_found") return null;
                throw error;
              });
            if (!bytes) continue;
            const contentType = bytes.headers.get("capvault-content-type") ?? "application/octet-stream";
            await writer.record({ t: "file", backend, prefix, path, blob, contentType, len: bytes.length }, bytes.body);
            counts.files++;
            counts.bytes += bytes.length;
            progress.show(counts);
          }
          files = page.cursor;
        } while (files);
      }

      let oauth: string | null = null;
      do {
        const page: { entries: unknown[]; cursor: string | null } = await admin.get("/export/oauth", {
          cursor: oauth,
        });
        if (page.entries.length > 0) await writer.record({ t: "oauth", entries: page.entries });
        counts.oauth += page.entries.length;
        oauth = page.cursor;
      } while (oauth);
      await writer.finish();
    } catch (error) {
      // A half-written archive must not be mistaken for one: it goes.
      await writer.abandon();
      await unlink(file).catch(() => undefined);
      throw error;
    } finally {
      progress.done();
    }
    if (input.json) await printJson(input.io, { file, encrypted: passphrase !== null, ...counts });
    else
      input.io.stderr.write(
        `exported ${counts.roots} roots, ${counts.caps} caps, ${counts.files} files, ${counts.blobs} older versions` +
          `${passphrase !== null ? " (encrypted)" : ""}; the archive holds the token key: keep it like one\n`,
      );
  },
};
