/**
 * read_text_file's `head` and `tail`, with the official server's results
 * (its headFile and tailFile), computed on the text in one pass each:
 * `head` keeps the first N lines as they are, a last unterminated line
 * included; `tail` turns CRLF into LF and keeps the last N lines. A count
 * of zero or less gives "" (the official server's answer to a negative one;
 * a zero never gets here, as there it means "the whole file").
 */
export function headLines(text: string, count: number): string {
  if (count <= 0) return "";
  const parts = text.split("\n");
  const complete = parts.length - 1;
  if (complete >= count) return parts.slice(0, Math.ceil(count)).join("\n");
  const lines = parts.slice(0, complete);
  if (parts[complete] !== "") lines.push(parts[complete]!);
  return lines.join("\n");
}

export function tailLines(text: string, count: number): string {
  const n = Math.trunc(count);
  if (n <= 0 || text === "") return "";
  return text.replace(/\r\n/g, "\n").split("\n").slice(-n).join("\n");
}
