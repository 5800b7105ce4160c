import fc from "fast-check";

/**
 * Inputs for Claude's memory tool route: the six commands with hostile paths
 * (raw, under `/memories`, and the look-alikes of `/memories` itself) and
 * mistyped fields.
 */
export function memoryBody(path: fc.Arbitrary<string>): fc.Arbitrary<string> {
  const memoryPath = fc.oneof(
    { weight: 6, arbitrary: path.map((p) => `/memories/${p}`) },
    { weight: 3, arbitrary: path },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        "/memories",
        "/memories/",
        "/memoriesX",
        "/memories/..",
        "/Memories/a",
        "memories/a",
        "/memories//a",
        "/memories\\..\\x",
        "/memories/%2e%2e",
        "/memories\u0000",
      ),
    },
    { weight: 1, arbitrary: fc.constantFrom(5, null, ["x"], { p: 1 }) },
  );
  const text = fc.oneof(fc.string({ maxLength: 30 }), fc.constantFrom("", "line\n".repeat(20_000), 7, null));
  const line = fc.constantFrom(0, 1, 2, -1, 1e9, 1.5, "1", null, 2 ** 53);
  const input = fc.oneof(
    fc.record(
      {
        command: fc.constant("view"),
        path: memoryPath,
        view_range: fc.constantFrom(undefined, [1, -1], [2, 1], [0, 0], [1, 1e9], [1], "1-2", [1.5, 2]),
      },
      { requiredKeys: ["command", "path"] },
    ),
    fc.record({ command: fc.constant("create"), path: memoryPath, file_text: text }),
    fc.record({ command: fc.constant("str_replace"), path: memoryPath, old_str: text, new_str: text }),
    fc.record({ command: fc.constant("insert"), path: memoryPath, insert_line: line, insert_text: text }),
    fc.record({ command: fc.constant("delete"), path: memoryPath }),
    fc.record({ command: fc.constant("rename"), old_path: memoryPath, new_path: memoryPath }),
    fc.record({ command: fc.constantFrom("format", "", "VIEW", "__proto__", 1), path: memoryPath }),
  );
  return fc.oneof(
    { weight: 12, arbitrary: input.map((body) => JSON.stringify(body)) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        "",
        "[]",
        "null",
        "{",
        '"view"',
        `{"command":"view","path":"/memories","x":${"[".repeat(5000)}${"]".repeat(5000)}}`,
      ),
    },
  );
}
