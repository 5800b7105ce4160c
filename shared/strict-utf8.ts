const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Decodes UTF-8 or refuses: `null` for invalid bytes. Lenient decoding would
 * turn two different byte strings into one name (both into U+FFFD), which is
 * how two spellings come to reach one file.
 *
 * @example
 * decodeUtf8Strict(new Uint8Array([0x68, 0x69])); // "hi"
 * decodeUtf8Strict(new Uint8Array([0xff]));       // null
 */
export function decodeUtf8Strict(bytes: Uint8Array): string | null {
  try {
    return decoder.decode(bytes);
  } catch {
    return null;
  }
}

/** Joins received chunks and decodes them strictly: `null` for invalid UTF-8. */
export function decodeChunksStrict(chunks: readonly Uint8Array[]): string | null {
  const bytes = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return decodeUtf8Strict(bytes);
}
