import type { CapApi } from "./api.ts";
import { h } from "./dom.ts";
import { size } from "./format.ts";

/** Text previews read at most this much (one Range request) and number at most this many lines. */
const TEXT_BYTES = 1024 * 1024;
const TEXT_LINES = 5000;
/** Images larger than this are offered for download only. */
const IMAGE_BYTES = 16 * 1024 * 1024;
const IMAGE_TYPES: Record<string, string> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  avif: "image/avif",
  svg: "image/svg+xml",
};

/**
 * Shows a file without letting it act. Text becomes text nodes, whatever it
 * holds (an HTML file shows its markup). Images load from a blob: URL into an
 * <img>, where an SVG's script never runs; the console's policy allows images
 * from blob: only. No file is ever opened as a document in this origin.
 */
export async function preview(api: CapApi, path: string, bytes: number): Promise<HTMLElement> {
  const name = path.slice(path.lastIndexOf("/") + 1);
  const imageType = IMAGE_TYPES[name.slice(name.lastIndexOf(".") + 1).toLowerCase()];
  if (imageType && bytes <= IMAGE_BYTES) {
    const data = await (await api.read(path)).arrayBuffer();
    const src = URL.createObjectURL(new Blob([data], { type: imageType }));
    const img = h("img", { src, alt: `preview of ${name}` });
    img.addEventListener("load", () => URL.revokeObjectURL(src), { once: true });
    return frame(name, bytes, img);
  }
  if (bytes === 0) return frame(name, bytes, h("p", {}, "(empty file)"));
  const res = await api.read(path, `bytes=0-${Math.min(bytes, TEXT_BYTES) - 1}`);
  const text = decodeText(new Uint8Array(await res.arrayBuffer()));
  if (text === null) return frame(name, bytes, h("p", {}, "Binary file: no preview. Use Download."));
  const lines = text.split("\n");
  if (bytes <= TEXT_BYTES && lines.at(-1) === "") lines.pop(); // the final newline ends the last line
  const shown = lines.slice(0, TEXT_LINES);
  const cut = bytes > TEXT_BYTES || lines.length > TEXT_LINES;
  return frame(
    name,
    bytes,
    h("pre", { className: "text", tabindex: 0 }, ...shown.map((line) => h("span", { className: "line" }, line))),
    cut
      ? h("p", { className: "note" }, `Showing the first ${shown.length} lines; download the file for the rest.`)
      : null,
  );
}

/** UTF-8 text, or null for bytes that are not (a cut multi-byte character at the end is fine). */
function decodeText(bytes: Uint8Array): string | null {
  if (bytes.includes(0)) return null;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes, { stream: true });
  } catch {
    return null;
  }
}

function frame(name: string, bytes: number, ...body: (HTMLElement | null)[]): HTMLElement {
  return h(
    "section",
    { className: "preview", "aria-label": `Preview of ${name}` },
    h("h2", {}, name, h("small", {}, ` ${size(bytes)}`)),
    ...body,
  );
}

/** Saves a file through a blob: URL, so the file's own URL is never navigated to (nor kept in history). */
export async function download(api: CapApi, path: string): Promise<void> {
  const blob = await (await api.read(path)).blob();
  const href = URL.createObjectURL(blob);
  const a = h("a", { href, download: path.slice(path.lastIndexOf("/") + 1) });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(href), 60_000);
}
