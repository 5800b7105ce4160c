import type { UploadLimits } from "../storage-adapters/upload-limits.ts";

/**
 * The disk host's defaults: looser than the worker's (UPLOAD_LIMITS), so a
 * slow client normally hears the worker's clear refusal first; these are the
 * backstop that frees the host's descriptors whatever the caller does. At
 * most 64 writes at once hold a temp file and their folders (about three
 * descriptors each); more are refused with `unavailable`.
 */
export const DISK_HOST_UPLOAD_LIMITS: UploadLimits = {
  idleMs: 60_000,
  minTotalMs: 120_000,
  minBytesPerSecond: 8 * 1024,
  maxConcurrent: 64,
};
