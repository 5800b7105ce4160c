/**
 * The JSON shapes of the HTTP contract, written once: the worker answers
 * with them and the SDK hands them to callers.
 */
import type { Right } from "./rights.ts";

export type Backend = "r2" | "disk";

/** `GET /object/<token>`: what a cap is. Never includes its root or backend. */
export interface CapInfo {
  /** Public fingerprint of the token: safe to show and log. */
  id: string;
  rights: Right[];
  label: string | null;
  /** ISO 8601. */
  createdAt: string;
  /** ISO 8601, or `null` when the cap never expires. */
  expiresAt: string | null;
  /** The id of the cap this one was minted from, or `null` for a root cap. */
  parent: string | null;
}

/** The answer of `POST /subdir` and `POST /admin/roots`. `token` and `url` are the secret. */
export interface MintedCap {
  token: string;
  url: string;
  id: string;
  rights: Right[];
  expiresAt: string | null;
}

export interface FileStat {
  type: "file";
  size: number;
  /** Hex MD5, unquoted. Absent for a cap without `read`: an unkeyed content hash lets a holder test guesses. */
  etag?: string;
  /** ISO 8601. */
  modified: string;
  contentType: string;
}

export interface DirStat {
  type: "dir";
}

export type Stat = FileStat | DirStat;

/** One entry of `GET /list`; files carry size, modified and, for a cap with `read`, etag. */
export interface ListEntry {
  name: string;
  type: "file" | "dir";
  size?: number;
  etag?: string;
  modified?: string;
}

/** A child as its parent sees it (`GET /children`). */
export interface ChildView {
  id: string;
  label: string | null;
  /** Relative to the parent cap. */
  path: string;
  rights: Right[];
  createdAt: string;
  expiresAt: string | null;
}

/** A root cap as the admin sees it (`GET /admin/roots`): unlike caps, this shows backend and prefix. */
export interface RootView {
  id: string;
  label: string | null;
  backend: Backend;
  prefix: string;
  rights: Right[];
  createdAt: string;
  expiresAt: string | null;
}
