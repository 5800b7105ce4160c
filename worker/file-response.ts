import { refusal } from "../shared/refusals.ts";
import type { ReadOutcome } from "../storage-adapters/storage-adapter.ts";
import { errorResponse } from "./http-error.ts";

/** Turns a read outcome into the HTTP response: 200, 206, 304 or 416. */
export function fileResponse(outcome: ReadOutcome): Response {
  const { meta } = outcome;
  const headers = new Headers({
    ETag: `"${meta.etag}"`,
    "Last-Modified": new Date(meta.modified).toUTCString(),
    "Accept-Ranges": "bytes",
  });
  switch (outcome.status) {
    case "not_modified":
      return new Response(null, { status: 304, headers });
    case "unsatisfiable":
      headers.set("Content-Range", `bytes */${meta.size}`);
      return errorResponse(refusal("rangeNotSatisfiable"), headers);
    case "body": {
      const { range } = outcome;
      const length = range ? range.end - range.start + 1 : meta.size;
      headers.set("Content-Type", meta.contentType);
      headers.set("Content-Length", String(length));
      // Files go out byte for byte: compressing on the way (as Cloudflare, and
      // Miniflare imitating it, do for text types) would drop Content-Length
      // and make ranges and ETags refer to bytes the client never sees.
      headers.set("Content-Encoding", "identity");
      headers.set("Cache-Control", "no-store, no-transform");
      if (range) headers.set("Content-Range", `bytes ${range.start}-${range.end}/${meta.size}`);
      // A stream that crossed RPC has lost its length; re-declaring it lets
      // the runtime send Content-Length instead of chunking.
      const fixed = new FixedLengthStream(length);
      outcome.body.pipeTo(fixed.writable).catch(() => undefined);
      return new Response(fixed.readable, { status: range ? 206 : 200, headers });
    }
  }
}
