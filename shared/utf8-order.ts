/**
 * Orders names by their UTF-8 bytes, the order R2 lists keys in. JavaScript's
 * `<` compares UTF-16 code units, which disagrees for characters above U+FFFF,
 * so every backend sorts with this to list identically.
 */
export function compareUtf8(a: string, b: string): number {
  const ea = encoder.encode(a);
  const eb = encoder.encode(b);
  const n = Math.min(ea.length, eb.length);
  for (let i = 0; i < n; i++) {
    if (ea[i] !== eb[i]) return ea[i]! - eb[i]!;
  }
  return ea.length - eb.length;
}

const encoder = new TextEncoder();
