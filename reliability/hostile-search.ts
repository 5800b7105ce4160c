/**
 * The content-search rows of the hostile table (reliability/hostile-requests.ts):
 * one GET /search at its per-request bounds (worker/content-search.ts) with the
 * patterns that cost RE2 most: one a backtracking engine takes exponential time
 * on, one that thrashes RE2's DFA, and the most files one request reads.
 */

/** Sends one HTTP request to a route of the table's cap; answers `ok` or `HTTP <status>: <text>`. */
type HttpSend = (method: string, route: string, body?: string) => Promise<string>;

export interface SearchCase {
  name: string;
  setup(put: (path: string, body: string) => Promise<void>): Promise<void>;
  send(http: HttpSend): Promise<string>;
}

/** SEARCH_MAX_BYTES, SEARCH_MAX_LINE_CHARS and SEARCH_MAX_FILES of worker/content-search.ts. */
const BYTES = 2 * 1024 * 1024;
const LINE = 16 * 1024;
const FILES = 200;

const once = (make: (put: (path: string, body: string) => Promise<void>) => Promise<void>) => {
  let made = false;
  return async (put: (path: string, body: string) => Promise<void>) => {
    if (!made) await make(put);
    made = true;
  };
};

/** Random a/b lines: what `[ab]*a[ab]{20}c` cannot match and its DFA cannot cache. */
function abText(bytes: number, seed: number): string {
  let s = seed;
  const line = () =>
    Array.from({ length: 1023 }, () => {
      s = (s * 1103515245 + 12345) & 0x7fffffff;
      return (s >> 16) & 1 ? "a" : "b";
    }).join("");
  return Array.from({ length: bytes / 1024 }, line).join("\n");
}

const search = (path: string, pattern: string) =>
  `/search?path=${path}&pattern=${encodeURIComponent(pattern)}&mode=count`;

export const SEARCH_CASES: SearchCase[] = [
  {
    name: "http GET /search, (a+)+$ over 2 MiB of 16 KiB lines of a (the byte bound)",
    setup: once(async (put) => {
      for (let i = 0; i < BYTES / (4 * LINE); i++)
        await put(`search-redos/f${i}.txt`, `${"a".repeat(LINE - 1)}!\n`.repeat(4));
    }),
    send: (http) => http("GET", search("search-redos", "(a+)+$")),
  },
  {
    name: "http GET /search, [ab]*a[ab]{20}c (costly for RE2's DFA) over 2 MiB (its budget: less)",
    setup: once(async (put) => {
      for (let i = 0; i < 16; i++) await put(`search-dfa/f${i}.txt`, abText(BYTES / 16 - 4096, i + 1));
    }),
    send: (http) => http("GET", search("search-dfa", "[ab]*a[ab]{20}c")),
  },
  {
    // A long program makes re2js's DFA give up and its slow path pay per instruction per character: the bytes a
    // request may scan shrink with the program's size (worker/content-search.ts, searchBudget).
    name: "http GET /search, a[ab]{200}$ (a long program) over 64 files of 4 KiB",
    setup: once(async (put) => {
      for (let i = 0; i < 64; i++) await put(`search-long/f${i}.txt`, abText(4096, i + 101));
    }),
    send: (http) => http("GET", search("search-long", "a[ab]{200}$")),
  },
  {
    name: `http GET /search over ${FILES + 1} small files (one past the file bound)`,
    setup: once(async (put) => {
      for (let i = 0; i <= FILES; i++) await put(`search-many/f${String(i).padStart(4, "0")}.txt`, "needle\n");
    }),
    send: (http) => http("GET", search("search-many", "needle")),
  },
];
