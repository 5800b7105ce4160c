import type { HolderJwk } from "../../shared/holder-key.ts";
import type { ChildPage, ChildView, MintedCap } from "../../shared/wire-types.ts";
import { CapError } from "./cap-error.ts";
import { assertCapIdShape } from "./cap-id.ts";
import { pathParam } from "./fs-cap-files.ts";
import { HolderKey } from "./holder.ts";
import type { ListPageOptions, RevokeResult, SubdirOptions } from "./types.ts";
import type { VaultTransport } from "./vault-transport.ts";

/**
 * A mint's JSON body: `base`, then each option named in `keys` that is set,
 * and the holder as its public JWK. Also the holder's key, when the caller
 * gave one to sign with. `POST /subdir` and `POST /admin/roots` both mint so.
 */
export function mintBody<O extends { holder?: HolderJwk | HolderKey }>(
  base: Record<string, unknown>,
  options: O,
  keys: readonly (keyof O & string)[],
): { json: Record<string, unknown>; holder: HolderKey | undefined } {
  const json: Record<string, unknown> = { ...base };
  for (const key of keys) if (options[key] !== undefined) json[key] = options[key];
  const holder = options.holder instanceof HolderKey ? options.holder : undefined;
  if (options.holder !== undefined) json.holder = holder ? holder.publicJwk : options.holder;
  return { json, holder };
}

/** The body of `POST /subdir` for these options, and the holder key the child will be bound to, if any. */
export function subdirRequest(options: SubdirOptions): {
  json: Record<string, unknown>;
  holder: HolderKey | undefined;
} {
  return mintBody({ path: pathParam(options.path) }, options, [
    "rights",
    "ttlSeconds",
    "label",
    "maxBytes",
    "maxFiles",
    "history",
  ]);
}

/** One page of `GET /children`. */
export async function childrenPageOf(http: VaultTransport, base: string, options: ListPageOptions): Promise<ChildPage> {
  const response = await http.send({
    method: "GET",
    url: `${base}/children`,
    query: { cursor: options.cursor, limit: options.limit },
    expect: [200],
  });
  const page = await http.json<Partial<ChildPage>>(response);
  // A vault from before paging answers without a cursor: that is one page.
  return { children: page.children ?? [], cursor: page.cursor ?? null };
}

/** Every child, page after page. */
export async function everyChild(childrenPage: (cursor: string | null) => Promise<ChildPage>): Promise<ChildView[]> {
  const all: ChildView[] = [];
  let cursor: string | null = null;
  do {
    const page: ChildPage = await childrenPage(cursor);
    all.push(...page.children);
    // A server that hands back the cursor it was given would loop forever.
    if (page.cursor !== null && page.cursor === cursor) {
      throw new CapError("unavailable", 200, "the vault repeated a children cursor");
    }
    cursor = page.cursor;
  } while (cursor !== null);
  return all;
}

export async function revokeChildOf(http: VaultTransport, base: string, id: string): Promise<void> {
  assertCapIdShape(id);
  const response = await http.send({ method: "DELETE", url: `${base}/children/${id}`, expect: [200, 202, 204] });
  await response.body?.cancel();
}

/**
 * A minted cap's URL on the mount this client already reaches, so a vault
 * whose public URL differs (proxy, 127.0.0.1 vs localhost) still hands out
 * caps that work for this client. Falls back to the server's `url`.
 */
export function childUrl(minted: MintedCap, mount: string): string {
  if (typeof minted.token === "string" && /^[A-Za-z0-9_-]+$/.test(minted.token))
    return `${mount}/object/${minted.token}`;
  if (typeof minted.url === "string") return minted.url;
  throw new CapError("unavailable", 0, "the vault answered a mint without a token");
}

export async function revokeResult(response: Response, http: VaultTransport): Promise<RevokeResult> {
  if (response.status !== 202) {
    await response.body?.cancel();
    return { complete: true };
  }
  const text = await response.text();
  let detail: unknown = text;
  try {
    detail = JSON.parse(text);
  } catch {
    // Keep the raw text: a pending cascade is worth reporting even if oddly worded.
  }
  return { complete: false, detail: typeof detail === "string" ? http.redact(detail) : detail };
}
