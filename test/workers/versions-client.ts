import { expect } from "vitest";
import type { Version, VersionPage } from "../../shared/wire-types.ts";
import { call } from "./vault.ts";

/** A cap as the versions routes take it: its token. */
type Holder = { token: string };

/** `GET /versions` of a path (`extra`: more query, e.g. `&limit=2`). */
export const history = (c: Holder, path: string, extra = "") =>
  call("GET", `/object/${c.token}/versions?path=${encodeURIComponent(path)}${extra}`);
export const readVersion = (c: Holder, id: string) => call("GET", `/object/${c.token}/versions/${id}`);
export const restore = (c: Holder, id: string) => call("POST", `/object/${c.token}/versions/${id}/restore`);
export const redact = (c: Holder, id: string) => call("POST", `/object/${c.token}/versions/${id}/redact`);

/** A path's versions as the cap sees them, newest first (the first page). */
export async function versionsOf(c: Holder, path: string): Promise<Version[]> {
  const res = await history(c, path);
  expect(res.status).toBe(200);
  return ((await res.json()) as VersionPage).versions;
}
