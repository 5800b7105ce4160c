import { createTwoFilesPatch } from "diff";
import { unifiedDiff } from "../worker/mcp/unified-diff.ts";
const before = "{a,b} 0\n{a,b} edited\ndelta 2\n";
const after = "{a,b} edited\n{a,b} edited\ndelta 2\n";
console.log(createTwoFilesPatch("f", "f", before, after, "original", "modified"));
console.log(unifiedDiff("f", before, after));
