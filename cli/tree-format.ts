import { formatBytes } from "./human-format.ts";
import { terminalSafe as safe } from "./terminal-safe.ts";
import type { WalkResult } from "./transfer/tree-types.ts";

/** One node of `tree --json`: folders carry their children, files their size (and etag with `read`). */
export interface TreeNode {
  name: string;
  type: "file" | "dir";
  size?: number;
  etag?: string;
  children?: TreeNode[];
}

/** The vault's order: by UTF-8 bytes, which differs from JS string order past U+FFFF. */
const byName = (a: TreeNode, b: TreeNode) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name));

/** A walk's flat paths as a nested, sorted tree. */
export function buildTree(walk: WalkResult): TreeNode[] {
  const folders = new Map<string, TreeNode[]>([["", []]]);
  const childrenOf = (dir: string) => folders.get(dir) ?? folders.set(dir, []).get(dir)!;
  const parentOf = (path: string) => (path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : "");
  const nameOf = (path: string) => path.slice(path.lastIndexOf("/") + 1);
  for (const dir of walk.dirs)
    childrenOf(parentOf(dir)).push({ name: nameOf(dir), type: "dir", children: childrenOf(dir) });
  for (const [path, file] of walk.files) {
    const node: TreeNode = { name: nameOf(path), type: "file", size: file.size };
    if (file.etag !== undefined) node.etag = file.etag;
    childrenOf(parentOf(path)).push(node);
  }
  for (const list of folders.values()) list.sort(byName);
  return childrenOf("");
}

/** `tree`'s picture, names escaped, with a count line; `long` adds sizes. */
export function formatTree(label: string, nodes: TreeNode[], long: boolean): string {
  const lines = [safe(label)];
  let folders = 0;
  let files = 0;
  const draw = (list: TreeNode[], indent: string) => {
    list.forEach((node, i) => {
      const last = i === list.length - 1;
      const size = long && node.type === "file" ? `[${formatBytes(node.size ?? 0)}]  ` : "";
      lines.push(`${indent}${last ? "└── " : "├── "}${size}${safe(node.name)}${node.type === "dir" ? "/" : ""}`);
      if (node.type === "dir") {
        folders++;
        draw(node.children ?? [], `${indent}${last ? "    " : "│   "}`);
      } else files++;
    });
  };
  draw(nodes, "");
  return `${lines.join("\n")}\n\n${folders} ${folders === 1 ? "folder" : "folders"}, ${files} ${files === 1 ? "file" : "files"}\n`;
}
