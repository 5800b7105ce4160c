import fc from "fast-check";
import { RIGHTS } from "../shared/rights.ts";

/**
 * JSON-RPC bodies for the stateless MCP endpoint: tool calls with hostile
 * arguments (paths, edits, depths, rights), the handshake, and malformed
 * JSON-RPC. Plain HTTP POST, no client session, so thousands run quickly.
 */
export function mcpBody(path: fc.Arbitrary<string>): fc.Arbitrary<string> {
  const text = fc.oneof(fc.string({ maxLength: 30 }), fc.constantFrom("", "x".repeat(70_000), "\u0000\u2028\ud800"));
  const args = fc.oneof(
    fc.record({ name: fc.constant("read_file"), arguments: fc.record({ path }) }),
    fc.record({ name: fc.constant("write_file"), arguments: fc.record({ path, content: text }) }),
    fc.record({
      name: fc.constant("edit_file"),
      arguments: fc.record(
        {
          path,
          edits: fc.oneof(
            fc.array(fc.record({ oldText: text, newText: text }), { maxLength: 3 }),
            fc.constantFrom([{ oldText: "" }], "x", null),
          ),
          dryRun: fc.boolean(),
        },
        { requiredKeys: ["path"] },
      ),
    }),
    fc.record({
      name: fc.constantFrom("list_directory", "get_file_info", "delete_file"),
      arguments: fc.record({ path }),
    }),
    fc.record({
      name: fc.constant("directory_tree"),
      arguments: fc.record({ path, maxDepth: fc.constantFrom(1, 10, 11, 0, -1, 1.5, 1e9, "3") }, { requiredKeys: [] }),
    }),
    fc.record({
      name: fc.constant("move_file"),
      arguments: fc.record({ source: path, destination: path, from: path, to: path }, { requiredKeys: [] }),
    }),
    fc.record({
      name: fc.constant("create_subdir_cap"),
      arguments: fc.record(
        {
          path,
          rights: fc.oneof(fc.subarray([...RIGHTS]), fc.constantFrom(["admin"], "read")),
          ttlSeconds: fc.constantFrom(1, 60, 0, 1e12),
          label: text,
        },
        { requiredKeys: [] },
      ),
    }),
    fc.record({
      name: fc.constant("list_versions"),
      arguments: fc.record(
        {
          path,
          cursor: fc.constantFrom("1", "0", "-1", "9".repeat(30), "x", ""),
          limit: fc.constantFrom(1, 100, 101, 0),
        },
        { requiredKeys: ["path"] },
      ),
    }),
    fc.record({
      name: fc.constant("restore_version"),
      arguments: fc.record({ versionId: fc.oneof(text, fc.constantFrom("1", "0", "9".repeat(30), "1e3", " 1")) }),
    }),
    fc.record({
      name: fc.constantFrom("nope", "", "read_file\u0000", "__proto__"),
      arguments: fc.jsonValue({ maxDepth: 2 }),
    }),
  );
  const call = fc
    .tuple(args, fc.oneof(fc.nat(), fc.constantFrom("id", null)))
    .map(([params, id]) => ({ jsonrpc: "2.0", id, method: "tools/call", params }));
  const other = fc.constantFrom<unknown>(
    {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "fuzz", version: "0" } },
    },
    { jsonrpc: "2.0", id: 2, method: "tools/list" },
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { jsonrpc: "2.0", id: 3, method: "resources/read", params: { uri: "file:///etc/passwd" } },
    { jsonrpc: "1.0", id: 4, method: "tools/list" },
    { id: 5, method: "tools/call" },
    [],
    [
      { jsonrpc: "2.0", id: 6, method: "tools/list" },
      { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "read_file", arguments: { path: "../x" } } },
    ],
  );
  return fc.oneof(
    { weight: 10, arbitrary: call.map((body) => JSON.stringify(body)) },
    { weight: 2, arbitrary: other.map((body) => JSON.stringify(body)) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        "",
        "{",
        "null",
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a.txt"}}'.repeat(
          2,
        ),
      ),
    },
  );
}
