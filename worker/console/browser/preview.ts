import type { CapApi } from "./api.ts";
import { h } from "./dom.ts";
import { size, when } from "./format.ts";
import type { Version } from "./wire.ts";

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

/** Where a preview's bytes come from: the live file (one Range request) or one of its versions. */
interface Source {
  name: string;
  bytes: number;
  /** At most the first `max` bytes. */
  head: (max: number) => Promise<Uint8Array>;
  all: () => Promise<ArrayBuffer>;
  /** Said after the name and size, such as which version this is. */
  caption?: string;
}

/**
 * Shows a file without letting it act. Text becomes text nodes, whatever it
 * holds (an HTML file shows its markup). Images load from a blob: URL into an
 * <img>, where an SVG's script never runs; the console's policy allows images
 * from blob: only. No file is ever opened as a document in this origin.
 */
export function preview(api: CapApi, path: string, bytes: number): Promise<HTMLElement> {
  return show({
    name: path.slice(path.lastIndexOf("/") + 1),
    bytes,
    head: async (max) => new Uint8Array(await (await api.read(path, `bytes=0-${max - 1}`)).arrayBuffer()),
    all: async () => (await api.read(path)).arrayBuffer(),
  });
}

/** One version of a file, shown as the file itself would be. */
export function previewVersion(api: CapApi, path: string, version: Version): Promise<HTMLElement> {
  return show({
    name: path.slice(path.lastIndexOf("/") + 1),
    bytes: version.size ?? 0,
    head: async (max) => readHead(await api.readVersion(version.id), max),
    all: async () => (await api.readVersion(version.id)).arrayBuffer(),
    caption: ` version ${version.id} (${version.operation}, ${when(version.at)})`,
  });
}

async function show(src: Source): Promise<HTMLElement> {
  const { name, bytes } = src;
  const imageType = IMAGE_TYPES[name.slice(name.lastIndexOf(".") + 1).toLowerCase()];
  const top = (...body: (HTMLElement | null)[]) => frame(name, bytes, src.caption ?? "", ...body);
  if (imageType && bytes <= IMAGE_BYTES) {
    const data = await src.all();
    const url = URL.createObjectURL(new Blob([data], { type: imageType }));
    const img = h("img", { src: url, alt: `preview of ${name}` });
    img.addEventListener("load", () => URL.revokeObjectURL(url), { once: true });
    return top(img);
  }
  if (bytes === 0) return top(h("p", {}, "(empty file)"));
  const text = decodeText(await src.head(Math.min(bytes, TEXT_BYTES)));
  if (text === null) return top(h("p", {}, "Binary file: no preview. Use Download."));
  const lines = text.split("\n");
  if (bytes <= TEXT_BYTES && lines.at(-1) === "") lines.pop(); // the final newline ends the last line
  const shown = lines.slice(0, TEXT_LINES);
  const cut = bytes > TEXT_BYTES || lines.length > TEXT_LINES;
  return top(
    h("pre", { className: "text", tabindex: 0 }, ...shown.map((line) => h("span", { className: "line" }, line))),
    cut
      ? h("p", { className: "note" }, `Showing the first ${shown.length} lines; download the file for the rest.`)
      : null,
  );
}

/** The first `max` bytes of a body that cannot be asked for a range; the rest is never fetched. */
async function readHead(res: Response, max: number): Promise<Uint8Array> {
  const out = new Uint8Array(max);
  let filled = 0;
  const reader = res.body?.getReader();
  while (reader && filled < max) {
    const { done, value } = await reader.read();
    if (done) break;
    const take = value.subarray(0, max - filled);
    out.set(take, filled);
    filled += take.length;
  }
  await reader?.cancel().catch(() => undefined);
  return out.subarray(0, filled);
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

function frame(name: string, bytes: number, caption: string, ...body: (HTMLElement | null)[]): HTMLElement {
  return h(
    "section",
    { className: "preview", "aria-label": `Preview of ${name}` },
    h("h2", {}, name, h("small", {}, ` ${size(bytes)}${caption}`)),
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
