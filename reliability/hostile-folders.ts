/**
 * The whole-folder and line-read rows of the hostile table
 * (reliability/hostile-requests.ts): a recursive delete and a folder move at
 * their bound (worker/folder-ops.ts), one past it, and a line read that
 * scans the largest file it takes (worker/line-read.ts).
 */

/** Sends one HTTP request to a route of the table's cap; answers `ok` or `HTTP <status>: <text>`. */
export type HttpSend = (method: string, route: string, body?: string) => Promise<string>;

export interface FolderCase {
  name: string;
  setup(put: (path: string, body: string) => Promise<void>): Promise<void>;
  send(http: HttpSend): Promise<string>;
}

/** FOLDER_OP_LIMIT: the most entries one folder delete or move takes. */
const BOUND = 20;
/** LINES_MAX_FILE_BYTES: the largest file a line read scans. */
const LINES_FILE = 16 * 1024 * 1024;

const folderOf = (name: string, files: number) => {
  let made = false;
  return async (put: (path: string, body: string) => Promise<void>) => {
    if (made) return;
    for (let i = 0; i < files; i++) await put(`${name}/f${String(i).padStart(4, "0")}.txt`, "x");
    made = true;
  };
};
const q = encodeURIComponent;

export const FOLDER_CASES: FolderCase[] = [
  {
    name: `http recursive DELETE /folder of ${BOUND} files (the bound)`,
    setup: folderOf("fold-del", BOUND),
    send: (http) => http("DELETE", `/folder?path=fold-del&recursive=true`),
  },
  {
    name: `http POST /move of a folder of ${BOUND} files (the bound)`,
    setup: folderOf("fold-mv", BOUND),
    send: (http) => http("POST", "/move", JSON.stringify({ from: "fold-mv", to: "fold-moved" })),
  },
  {
    name: `http recursive DELETE /folder of ${BOUND + 1} files (one past the bound)`,
    setup: folderOf("fold-big", BOUND + 1),
    send: (http) => http("DELETE", `/folder?path=fold-big&recursive=true`),
  },
  {
    name: "http GET /lines, the last 2,000 lines of a 16 MiB file of newlines",
    setup: (put) => put("lines-16m.txt", "\n".repeat(LINES_FILE)),
    send: (http) => http("GET", `/lines?path=${q("lines-16m.txt")}&offset=${LINES_FILE - 1999}&limit=2000`),
  },
];
