import type { AgentInputItem, Session } from "@openai/agents-core";
import { isCapError } from "../typescript/cap-error.ts";
import { FsCap } from "../typescript/fs-cap.ts";
import type { CapOptions } from "../typescript/types.ts";
import {
  CapSessionError,
  folderPath,
  itemLines,
  parseSessionFile,
  type SessionFile,
  sessionPath,
} from "./session-file.ts";

export interface CapSessionOptions extends CapOptions {
  /** The session's id and file name (`<id>.jsonl`); default a random UUID, as `MemorySession` does. */
  sessionId?: string;
  /** The folder of the cap that holds the session files (default: the cap's root). */
  folder?: string;
  /** Writes that lost a race before the call gives up with `contended` (default 10). */
  attempts?: number;
}

const CONTENT_TYPE = "application/jsonl; charset=utf-8";
const EMPTY = new Uint8Array(0);

/**
 * An OpenAI Agents JS `Session` kept in a cap: one session is one JSONL file,
 * `<folder>/<sessionId>.jsonl`, one item a line, which a person can read (and
 * undo, through its versions) in the vault's console.
 *
 * The vault has no append, so every change is a read and a write of the whole
 * file, and the write carries the SHA-256 of the bytes read: it lands only
 * over them. A writer that lost the race to another process reads again and
 * redoes its change, so concurrent `addItems` lose nothing, and `popItem`
 * removes the line it returns and no other.
 *
 * @example
 * const session = new CapSession(process.env.CAPVAULT_CAP!, { sessionId: "chat-42", folder: "sessions" });
 * await run(agent, "What did I ask you yesterday?", { session });
 */
export class CapSession implements Session {
  readonly #cap: FsCap;
  readonly #id: string;
  readonly #path: string;
  readonly #attempts: number;

  /**
   * @param cap a cap URL (`options` then also carry `fetch` and `holder`), or an `FsCap`.
   * @throws CapSessionError `invalid_session_id`, before any request, for an id that cannot be one file's name.
   */
  constructor(cap: string | FsCap, options: CapSessionOptions = {}) {
    const { sessionId = crypto.randomUUID(), folder, attempts = 10, ...capOptions } = options;
    if (!Number.isSafeInteger(attempts) || attempts < 1) {
      throw new TypeError(`attempts must be a whole number of at least 1 (got ${attempts})`);
    }
    this.#path = sessionPath(folderPath(folder), sessionId);
    this.#id = sessionId;
    this.#attempts = attempts;
    this.#cap = typeof cap === "string" ? new FsCap(cap, capOptions) : cap;
  }

  /** Where the session is kept, relative to the cap's root. */
  get path(): string {
    return this.#path;
  }

  async getSessionId(): Promise<string> {
    return this.#id;
  }

  /**
   * The items in the order added; with `limit`, the last `limit` of them
   * (none for 0 or less), as `MemorySession` answers. A session never
   * written is empty.
   * @throws CapSessionError `corrupt_file` naming the first line that is not an item.
   */
  async getItems(limit?: number): Promise<AgentInputItem[]> {
    const bytes = await this.#read();
    const { items } = bytes === null ? { items: [] } : parseSessionFile(bytes, this.#path);
    if (limit === undefined) return items;
    if (limit <= 0) return [];
    return items.slice(Math.max(items.length - limit, 0));
  }

  /**
   * Appends the items as one write: all of them land, or (on any refusal) none.
   * No items is no request.
   * @throws CapSessionError `invalid_item` (before any request), `corrupt_file`, `contended`; CapError from the vault.
   */
  async addItems(items: AgentInputItem[]): Promise<void> {
    const lines = new TextEncoder().encode(itemLines(items));
    if (items.length === 0) return;
    await this.#update((bytes, file) => ({
      next: concat(bytes ?? EMPTY, file?.unterminated ? "\n" : "", lines),
      result: undefined,
    }));
  }

  /**
   * Removes and answers the last item; `undefined` (and no write) for an empty session.
   * @throws CapSessionError `corrupt_file`, `contended`; CapError from the vault.
   */
  async popItem(): Promise<AgentInputItem | undefined> {
    return this.#update((bytes, file) =>
      bytes === null || file === null || file.items.length === 0
        ? { next: null, result: undefined }
        : // Cut the bytes rather than re-encode the rest, so every other line stays exactly as it was.
          { next: bytes.slice(0, file.lastLineStart), result: file.items[file.items.length - 1] },
    );
  }

  /** Deletes the session's file; one that is not there is already clear. */
  async clearSession(): Promise<void> {
    try {
      await this.#cap.delete(this.#path);
    } catch (error) {
      if (!(isCapError(error) && error.code === "not_found")) throw error;
    }
  }

  /** `CapSession(<id>)`: never the cap URL, which is a secret. */
  toString(): string {
    return `CapSession(${JSON.stringify(this.#id)})`;
  }

  async #read(): Promise<Uint8Array | null> {
    try {
      return await this.#cap.read(this.#path);
    } catch (error) {
      if (isCapError(error) && error.code === "not_found") return null;
      throw error;
    }
  }

  /**
   * One read-modify-write of the file, only over the bytes read (`ifNoneMatch: "*"` for a file not there yet).
   * `change` answers `next: null` to write nothing.
   */
  async #update<T>(
    change: (bytes: Uint8Array | null, file: SessionFile | null) => { next: Uint8Array | null; result: T },
  ): Promise<T> {
    let lost: unknown;
    for (let attempt = 1; attempt <= this.#attempts; attempt++) {
      const bytes = await this.#read();
      // Parsed even to append: adding to a file that no longer reads as a session would bury the damage.
      const file = bytes === null ? null : parseSessionFile(bytes, this.#path);
      const { next, result } = change(bytes, file);
      if (next === null) return result;
      const precondition = bytes === null ? { ifNoneMatch: "*" } : { ifMatch: `sha256:${await sha256Hex(bytes)}` };
      try {
        await this.#cap.write(this.#path, next, { contentType: CONTENT_TYPE, ...precondition });
        return result;
      } catch (error) {
        if (!(isCapError(error) && error.code === "precondition_failed")) throw error;
        lost = error;
        // Random and growing, so writers that collided do not collide again in step.
        if (attempt < this.#attempts) await sleep(Math.random() * Math.min(250, 10 * 2 ** attempt));
      }
    }
    throw new CapSessionError(
      "contended",
      `${this.#path}: another writer changed the session during each of ${this.#attempts} attempts; nothing was written`,
      { path: this.#path, cause: lost },
    );
  }
}

function concat(head: Uint8Array, separator: string, tail: Uint8Array): Uint8Array {
  const sep = new TextEncoder().encode(separator);
  const out = new Uint8Array(head.length + sep.length + tail.length);
  out.set(head, 0);
  out.set(sep, head.length);
  out.set(tail, head.length + sep.length);
  return out;
}

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
