/**
 * The WebDAV rows of the hostile table (reliability/hostile-requests.ts):
 * single requests on `/object/<token>/dav/` that would cost the vault the
 * most (a big folder listed, deleted or copied whole, a maximal XML body, an
 * entity bomb, a lock flood); each is bounded (worker/dav/) and timed here.
 */

/** Sends one WebDAV request on the table's cap; answers `ok` or `HTTP <status>: <text>`. */
export type DavSend = (
  method: string,
  path: string,
  body?: string,
  headers?: Record<string, string>,
) => Promise<string>;

export interface DavCase {
  name: string;
  setup(put: (path: string, body: string) => Promise<void>): Promise<void>;
  send(dav: DavSend): Promise<string>;
}

/** One past the most entries WebDAV deletes, copies or moves in one folder (DAV_TREE_LIMIT). */
const BIG = 1001;
let bigMade = false;
const bigFolder = async (put: (path: string, body: string) => Promise<void>) => {
  if (bigMade) return;
  for (let i = 0; i < BIG; i++) await put(`dav-big/f${String(i).padStart(4, "0")}.txt`, "x");
  bigMade = true;
};
const none = async () => undefined;
const names = (n: number) =>
  `<D:propfind xmlns:D="DAV:"><D:prop>${Array.from({ length: n }, (_, i) => `<p${i} xmlns="urn:x"/>`).join("")}</D:prop></D:propfind>`;
const BOMB =
  '<?xml version="1.0"?><!DOCTYPE b [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">' +
  '<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]><D:propfind xmlns:D="DAV:"><D:prop><D:x>&c;</D:x></D:prop></D:propfind>';
const LOCK =
  '<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockinfo>';

export const DAV_CASES: DavCase[] = [
  {
    name: `dav PROPFIND Depth 1 on a folder of ${BIG} files`,
    setup: bigFolder,
    send: (dav) => dav("PROPFIND", "dav-big/", undefined, { depth: "1" }),
  },
  {
    name: `dav DELETE of a folder of ${BIG} files (one past the bound)`,
    setup: bigFolder,
    send: (dav) => dav("DELETE", "dav-big/"),
  },
  {
    name: `dav COPY of a folder of ${BIG} files (one past the bound)`,
    setup: bigFolder,
    send: (dav) => dav("COPY", "dav-big/", undefined, { destination: "dav-copy/" }),
  },
  {
    name: "dav PROPFIND, a body of 2,500 property names (under 64 KiB)",
    setup: bigFolder,
    send: (dav) => dav("PROPFIND", "dav-big/", names(2500), { depth: "1" }),
  },
  { name: "dav PROPFIND, an entity bomb", setup: none, send: (dav) => dav("PROPFIND", "", BOMB, { depth: "0" }) },
  {
    name: "dav PROPFIND Depth infinity",
    setup: none,
    send: (dav) => dav("PROPFIND", "", undefined, { depth: "infinity" }),
  },
  {
    name: "dav lock flood: 100 LOCKs on new paths",
    setup: none,
    async send(dav) {
      const outcomes = new Map<string, number>();
      for (let i = 0; i < 100; i++) {
        const outcome = (await dav("LOCK", `dav-lock-${i}`, LOCK, { depth: "0" })).slice(0, 40);
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      }
      return [...outcomes].map(([o, n]) => `${n}x ${o}`).join("; ");
    },
  },
];

/** The sender for one cap, with `request` as the table's own one-connection HTTP request. */
export function davSend(
  capUrl: string,
  request: (
    method: string,
    url: string,
    body?: string,
    headers?: Record<string, string>,
  ) => Promise<{ status: number; text: string }>,
): DavSend {
  return async (method, path, body, headers = {}) => {
    const target = `${capUrl}/dav/${path}`;
    const sent = { ...headers };
    if (sent.destination !== undefined) sent.destination = `${capUrl}/dav/${sent.destination}`;
    const answer = await request(method, target, body, sent);
    return answer.status < 300 ? "ok" : `HTTP ${answer.status}: ${answer.text.replace(/\s+/g, " ").slice(0, 120)}`;
  };
}
