/**
 * Text that came from the vault (names, labels, content types, error
 * messages) is attacker-chosen: anyone with write access to a folder picks
 * its file names. Printed raw, a name could carry terminal escape sequences
 * (C0 ESC, or C1 CSI U+009B), bidi overrides that make `evil.exe` read as
 * `exe.live`, or line separators that forge extra output lines. Human output
 * shows each such character as a visible escape instead; `--json` output
 * writes them as JSON's `\uXXXX` escapes (json-output.ts).
 */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, (c) => {
    const code = c.charCodeAt(0);
    return code < 0x100 ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}
