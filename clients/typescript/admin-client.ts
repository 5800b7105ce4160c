import type { MintedCap, ReissueStep, RootList, RootView } from "../../shared/wire-types.ts";
import { CapError } from "./cap-error.ts";
import { assertCapIdShape } from "./cap-id.ts";
import { parseVaultUrl } from "./cap-url.ts";
import { capFromMinted, type FsCap } from "./fs-cap.ts";
import { mintBody, revokeResult } from "./fs-cap-delegation.ts";
import type { ClientOptions, FetchLike, MintRootOptions, RevokeResult } from "./types.ts";
import { VaultTransport } from "./vault-transport.ts";

/**
 * The vault operator's client: mints, lists and revokes root caps with the
 * admin token. Only the operator should hold that token; agents get caps.
 *
 * @example
 * const admin = new AdminClient("http://127.0.0.1:8787", process.env.CAPVAULT_ADMIN_TOKEN!);
 * const notes = await admin.mintRoot({ backend: "r2", prefix: "notes/", label: "notes" });
 * console.log(notes.url); // hand this to an agent
 */
export class AdminClient {
  readonly #mount: string;
  readonly #token: string;
  readonly #fetch: FetchLike | undefined;
  readonly #http: VaultTransport;

  /**
   * @param vaultUrl The vault's origin, e.g. `http://127.0.0.1:8787`.
   * @param adminToken The admin token (`CAPVAULT_ADMIN_TOKEN`).
   */
  constructor(vaultUrl: string, adminToken: string, options: ClientOptions = {}) {
    this.#mount = parseVaultUrl(vaultUrl);
    this.#token = adminToken;
    this.#fetch = options.fetch;
    this.#http = new VaultTransport(options.fetch, [adminToken]);
  }

  /**
   * Mints a root cap over a backend prefix. The returned cap knows its id,
   * rights and expiry.
   * @example
   * const ro = await admin.mintRoot({ backend: "disk", prefix: "", rights: ["read", "list"], ttlSeconds: 86400 });
   */
  async mintRoot(options: MintRootOptions): Promise<FsCap> {
    const { json, holder } = mintBody({ backend: options.backend, prefix: options.prefix }, options, [
      "rights",
      "label",
      "ttlSeconds",
      "keepVersions",
      "keepDays",
      "maxBytes",
      "maxFiles",
    ]);
    const response = await this.#http.send({
      method: "POST",
      url: `${this.#mount}/admin/roots`,
      headers: this.#auth(),
      json,
      expect: [200, 201],
    });
    const minted = await this.#http.json<MintedCap>(response);
    return capFromMinted(minted, this.#mount, this.#fetch, holder);
  }

  /**
   * Every live root cap, with its backend and prefix (admin eyes only), in id
   * order. Follows the pages of `GET /admin/roots` (each at most 1,000 roots).
   * @example
   * for await (const root of admin.listRoots()) console.log(root.id, root.backend, root.prefix);
   * const all = await admin.listRoots(); // or every root at once, as an array
   */
  listRoots(): Promise<RootView[]> & AsyncIterable<RootView> {
    // Iterable like list() and children(), and still a promise of the array for existing callers.
    const all = this.#allRoots();
    return Object.assign(all, {
      async *[Symbol.asyncIterator]() {
        yield* await all;
      },
    });
  }

  async #allRoots(): Promise<RootView[]> {
    const roots: RootView[] = [];
    let cursor: string | null = null;
    do {
      const page: RootList = await this.listRootsPage({ cursor });
      roots.push(...page.roots);
      // A server that hands back the cursor it was given would loop forever.
      if (page.cursor !== null && page.cursor === cursor) {
        throw new CapError("unavailable", 200, "the vault repeated a roots cursor");
      }
      cursor = page.cursor;
    } while (cursor);
    return roots;
  }

  /**
   * One page of live root caps: at most `limit` (1–1,000, default 1,000), and
   * the cursor of the next page, or null on the last.
   * @example
   * const { roots, cursor } = await admin.listRootsPage({ limit: 100 });
   */
  async listRootsPage(options: { cursor?: string | null; limit?: number } = {}): Promise<RootList> {
    const query = new URLSearchParams();
    if (options.cursor) query.set("cursor", options.cursor);
    if (options.limit !== undefined) query.set("limit", String(options.limit));
    const response = await this.#http.send({
      method: "GET",
      url: `${this.#mount}/admin/roots${query.toString() ? `?${query}` : ""}`,
      headers: this.#auth(),
      expect: [200],
    });
    return this.#http.json<RootList>(response);
  }

  /**
   * Revokes a root cap and everything minted from it.
   * @example
   * await admin.revokeRoot(notes.id!);
   */
  async revokeRoot(id: string): Promise<RevokeResult> {
    assertCapIdShape(id);
    const response = await this.#http.send({
      method: "DELETE",
      url: `${this.#mount}/admin/roots/${id}`,
      headers: this.#auth(),
      expect: [200, 202, 204],
    });
    return revokeResult(response, this.#http);
  }

  /**
   * One step of re-issuing the caps of state format 0 (docs/upgrading.md):
   * the caps it re-issued, and whether every one is. Pass the old ids of the
   * last step's caps in `ack` once their new URLs are kept: until then each
   * step hands them again. `capvault reissue-legacy` runs the steps.
   */
  async reissueLegacyStep(options: { mintedBefore?: string; ack?: readonly string[] } = {}): Promise<ReissueStep> {
    const response = await this.#http.send({
      method: "POST",
      url: `${this.#mount}/admin/reissue-legacy`,
      headers: this.#auth(),
      json: {
        ...(options.mintedBefore === undefined ? {} : { mintedBefore: options.mintedBefore }),
        ack: options.ack ?? [],
      },
      expect: [200],
    });
    return this.#http.json<ReissueStep>(response);
  }

  toString(): string {
    return "AdminClient(…)";
  }

  toJSON(): { type: "AdminClient" } {
    return { type: "AdminClient" };
  }

  [Symbol.for("nodejs.util.inspect.custom")](): string {
    return this.toString();
  }

  #auth(): Record<string, string> {
    return { authorization: `Bearer ${this.#token}` };
  }
}
