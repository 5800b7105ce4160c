/**
 * The export and import rows of the hostile table (reliability/hostile-requests.ts,
 * docs/export-import.md): the admin is trusted, but an archive is a file that
 * may come from anywhere, so each import call is bounded as a cap's request
 * is. A page of staged caps at the import's JSON bound and one byte past it,
 * and export pages at theirs.
 */
import { randomBytes } from "node:crypto";
import { idOfKey } from "../durable-objects/import-check.ts";

/** Sends one admin request (the admin token is the sender's): the status and the answer's text. */
export type AdminSend = (method: string, route: string, body?: string) => Promise<{ status: number; text: string }>;

export interface AdminCase {
  name: string;
  /** Before the timed request: opens an import, writes files. */
  setup(admin: AdminSend, put: (path: string, body: string) => Promise<void>): Promise<void>;
  send(admin: AdminSend): Promise<{ status: number; text: string }>;
  /** After it: gives the import up, so the vault is left as it was. */
  after?(admin: AdminSend): Promise<void>;
}

/** IMPORT_JSON_BYTES (worker/admin-transfer-routes.ts): the largest JSON body an import call reads. */
const IMPORT_JSON_BYTES = 512 * 1024;
/** The most caps one staging call takes (root-registry.ts STAGE_CAPS). */
const STAGE_CAPS = 4;
/** The most caps one commit step makes live (root-registry.ts COMMIT_CAPS). */
const COMMIT_CAPS = 25;
/** The most audit lines a staged cap carries (import-check.ts). */
const AUDIT_ROWS = 1100;

let archiveId = "";

async function begin(admin: AdminSend): Promise<void> {
  archiveId = randomBytes(16).toString("hex");
  const state = await admin("GET", "/state");
  const fingerprint = (JSON.parse(state.text) as { keyFingerprint: string }).keyFingerprint;
  const body = JSON.stringify({ archiveId, keyFingerprint: fingerprint, merge: true });
  const opened = await admin("POST", "/import/begin", body);
  if (opened.status !== 200) throw new Error(`could not open an import: ${opened.status} ${opened.text}`);
}

async function abort(admin: AdminSend): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const step = await admin("POST", "/import/abort", JSON.stringify({ archiveId }));
    if (step.status !== 200 || (JSON.parse(step.text) as { done: boolean }).done) return;
  }
}

/** A staging call of STAGE_CAPS caps, each with as many audit lines as fit, the body padded to `bytes`. */
function stagingBody(bytes: number, count = STAGE_CAPS): string {
  const line = { at: 1, op: "write", path: "p".repeat(40), outcome: "ok", child: null, count: 1 };
  const perCap = Math.min(AUDIT_ROWS, Math.floor(bytes / count / (JSON.stringify(line).length + 1)) - 4);
  const caps = Array.from({ length: count }, (_, i) => {
    const key = randomBytes(32).toString("hex");
    const record = {
      id: idOfKey(key),
      key,
      backend: "r2",
      root: [`hostile-import/c${i}/`],
      rights: ["read", "list"],
      label: null,
      createdAt: 1,
      expiresAt: null,
      parent: null,
      depth: 0,
    };
    return { record, children: [], audit: Array.from({ length: perCap }, () => line), holderMark: null };
  });
  const text = JSON.stringify({ archiveId, caps });
  if (text.length > bytes) throw new Error("the staging body came out larger than asked");
  // JSON allows white space between values: pad to exactly `bytes`.
  return `${text.slice(0, -1)}${" ".repeat(bytes - text.length)}}`;
}

/** The largest cap an archive carries: every audit line a cap keeps, and its most children. */
function oneFullCap(): string {
  const key = randomBytes(32).toString("hex");
  const record = {
    id: idOfKey(key),
    key,
    backend: "r2",
    root: ["hostile-import/full/"],
    rights: ["read", "list", "subdir"],
    label: null,
    createdAt: 1,
    expiresAt: null,
    parent: null,
    depth: 0,
  };
  const children = Array.from({ length: 1000 }, (_, i) => {
    const childKey = randomBytes(32).toString("hex");
    return {
      id: idOfKey(childKey),
      key: childKey,
      label: null,
      path: `c${i}`,
      rights: ["read"],
      createdAt: 1 + i,
      expiresAt: null,
    };
  });
  const line = { at: 1, op: "write", path: "p".repeat(40), outcome: "ok", child: null, count: 1 };
  const audit = Array.from({ length: AUDIT_ROWS }, () => line);
  return JSON.stringify({ archiveId, caps: [{ record, children, audit, holderMark: null }] });
}

const q = encodeURIComponent;

export const ADMIN_CASES: AdminCase[] = [
  {
    name: "admin export of a page of 1,000 files (the files page)",
    async setup(_admin, put) {
      for (let i = 0; i < 1000; i += 50)
        await Promise.all(
          Array.from({ length: 50 }, (_, j) => put(`export-page/f${String(i + j).padStart(4, "0")}`, "x")),
        );
    },
    send: (admin) => admin("GET", `/export/files?backend=r2&prefix=${q("default/")}`),
  },
  {
    name: "admin export of a journal page (250 rows)",
    setup: async () => undefined,
    send: (admin) => admin("GET", `/export/journal?backend=r2&prefix=${q("default/")}&table=versions`),
  },

  {
    name: `admin import of ${STAGE_CAPS} caps with their audit in one ${IMPORT_JSON_BYTES / 1024} KiB call (the JSON bound)`,
    setup: (admin) => begin(admin),
    send: (admin) => admin("POST", "/import/caps", stagingBody(IMPORT_JSON_BYTES)),
    after: abort,
  },
  {
    name: `admin import of ${STAGE_CAPS + 1} caps in one call (one past the caps bound)`,
    setup: (admin) => begin(admin),
    send: (admin) => admin("POST", "/import/caps", stagingBody(64 * 1024, STAGE_CAPS + 1)),
    after: abort,
  },
  {
    name: `admin import of one cap with ${AUDIT_ROWS} audit lines and 1,000 children`,
    setup: (admin) => begin(admin),
    send: (admin) => admin("POST", "/import/caps", oneFullCap()),
    after: abort,
  },
  {
    name: `admin import commit step (${COMMIT_CAPS} caps made live)`,
    async setup(admin) {
      await begin(admin);
      for (let i = 0; i < COMMIT_CAPS; i += STAGE_CAPS) {
        const staged = await admin(
          "POST",
          "/import/caps",
          stagingBody(64 * 1024, Math.min(STAGE_CAPS, COMMIT_CAPS - i)),
        );
        if (staged.status !== 200) throw new Error(`could not stage: ${staged.status} ${staged.text}`);
      }
    },
    send: (admin) => admin("POST", "/import/commit", JSON.stringify({ archiveId })),
    async after(admin) {
      for (let i = 0; i < 100; i++) {
        const step = await admin("POST", "/import/commit", JSON.stringify({ archiveId }));
        if (step.status !== 200 || (JSON.parse(step.text) as { done: boolean }).done) return;
      }
    },
  },
  {
    name: "admin import call one byte past its JSON bound",
    setup: (admin) => begin(admin),
    send: (admin) => admin("POST", "/import/caps", stagingBody(IMPORT_JSON_BYTES + 1)),
    after: abort,
  },
];
