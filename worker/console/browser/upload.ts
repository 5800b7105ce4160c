import { ApiError, errorOf, type Prover } from "./api.ts";
import { h } from "./dom.ts";
import { progressText, size } from "./format.ts";

/**
 * Uploads one file with a progress bar. XMLHttpRequest, because fetch cannot
 * report upload progress; it sends the File as the body, so the browser
 * declares its Content-Length as the vault requires. For a holder-bound cap
 * the proof must name the body's SHA-256, so the file is read first and
 * exactly those bytes are sent. Resolves with whether it replaced a file
 * (the vault answers 200 for that, 201 for a new one).
 */
export async function uploadFile(
  url: string,
  file: File,
  progress: (loaded: number, total: number) => void,
  bound: boolean,
  prove: Prover,
): Promise<boolean> {
  const bytes = bound ? new Uint8Array(await file.arrayBuffer()) : null;
  const proof = await prove("PUT", url, bytes);
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("PUT", url);
    xhr.setRequestHeader("Content-Type", file.type || "application/octet-stream");
    for (const [name, value] of Object.entries(proof)) xhr.setRequestHeader(name, value);
    xhr.upload.addEventListener("progress", (e) => {
      if (e.lengthComputable) progress(e.loaded, e.total);
    });
    xhr.addEventListener("load", () => {
      if (xhr.status >= 200 && xhr.status < 300) return resolve(xhr.status === 200);
      const res = new Response(xhr.responseText, { status: xhr.status });
      void errorOf(res).then(reject);
    });
    xhr.addEventListener("error", () => reject(new ApiError("network", "the upload was cut off")));
    xhr.send(bytes ?? file);
  });
}

/** One row in the upload list: the file's name and size, its progress bar, the percent and the time left. */
export function progressRow(file: File): { row: HTMLElement; progress: (loaded: number, total: number) => void } {
  const bar = h("progress", { max: 1, value: 0, "aria-label": `uploading ${file.name}` });
  const text = h("span", { className: "progress-text" }, progressText(0, file.size, 0));
  const started = performance.now();
  const progress = (loaded: number, total: number) => {
    bar.value = total > 0 ? loaded / total : 0;
    text.textContent = progressText(loaded, total, performance.now() - started);
  };
  return { row: h("li", {}, h("span", {}, `${file.name} (${size(file.size)}) `), bar, " ", text), progress };
}

/** Lets files be dropped on `zone`; `onFiles` gets them. */
export function dropZone(zone: HTMLElement, onFiles: (files: File[]) => void): void {
  zone.addEventListener("dragover", (e) => {
    e.preventDefault();
    zone.classList.add("dragging");
  });
  zone.addEventListener("dragleave", () => zone.classList.remove("dragging"));
  zone.addEventListener("drop", (e) => {
    e.preventDefault();
    zone.classList.remove("dragging");
    onFiles([...(e.dataTransfer?.files ?? [])]);
  });
}
