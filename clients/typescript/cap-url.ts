/** A cap URL split into the parts the SDK needs. */
export interface ParsedCapUrl {
  /** Everything before `/object/<token>`: origin plus any path prefix a proxy mounts the vault under. */
  mount: string;
  token: string;
}

const CAP_PATH = /^(.*)\/object\/([^/]+)\/?$/;

/**
 * Parses `<origin>/object/<token>` (one trailing slash allowed). The thrown
 * message never quotes the input: a cap URL is a secret, and error messages
 * end up in logs.
 *
 * @example
 * parseCapUrl("http://127.0.0.1:8787/object/abcd…/") // { mount: "http://127.0.0.1:8787", token: "abcd…" }
 */
export function parseCapUrl(url: string): ParsedCapUrl {
  let parsed: URL;
  try {
    parsed = new URL(String(url));
  } catch {
    throw new TypeError("not a cap URL: expected <origin>/object/<token>");
  }
  const [, mountPath, token] = CAP_PATH.exec(parsed.pathname) ?? [];
  if ((parsed.protocol !== "http:" && parsed.protocol !== "https:") || mountPath === undefined || !token) {
    throw new TypeError("not a cap URL: expected <origin>/object/<token>");
  }
  return { mount: `${parsed.origin}${mountPath}`, token };
}

/** The base URL of a vault (admin routes live under it), without trailing slashes. */
export function parseVaultUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(String(url));
  } catch {
    throw new TypeError("not a vault URL: expected http(s)://host:port");
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new TypeError("not a vault URL: expected http(s)://host:port");
  }
  return `${parsed.origin}${parsed.pathname.replace(/\/+$/, "")}`;
}
