"""test_file_operations.py's real-I/O cases (hermes_vectors/file_operations.json) through the plugin's file tools.

Each vector is a real call to CapFileTools on a fresh folder of a live vault:
the disk backend (real host files, modes and links) and R2 (every vector that
needs no host setup). A vector passes when the plugin's outcome is Hermes'; a
flagged one ('diverges') must show the cap's own outcome and must NOT show
Hermes', so a flag that no longer differs fails the run.

Environment: CAPVAULT_TEST_DISK_CAP, CAPVAULT_TEST_DISK_ROOT and CAPVAULT_TEST_CAP (see test_hermes_plugin).
"""

from __future__ import annotations

import os
import unittest
from pathlib import Path
from typing import Any, Dict, List, Optional

from capvault import CapError, FsCap
from capvault.hermes_plugin import CapFileTools
from test_hermes_plugin import DISK_CAP, DISK_ROOT, R2_CAP, disk_area, r2_area, vectors


def body(spec: Any) -> bytes:
    if isinstance(spec, str):
        return spec.encode("utf-8")
    if "hex" in spec:
        return bytes.fromhex(spec["hex"])
    return "".join(f"{i}\n" for i in range(1, spec["lines"] + 1)).encode()


def dig(result: Dict[str, Any], key: str) -> Any:
    """``result[a][0][b]`` for the dotted key ``a.0.b``; a KeyError when it is absent."""
    value: Any = result
    for part in key.split("."):
        value = value[int(part)] if isinstance(value, list) else value[part]
    return value


def misses(expect: Dict[str, Any], result: Dict[str, Any], cap: FsCap, host: Optional[Path]) -> List[str]:
    """What of ``expect`` the call's result and the tree after it do not show (empty: all of it)."""
    out: List[str] = []
    for key, want in expect.get("result", {}).items():
        try:
            got = dig(result, key)
        except (KeyError, IndexError, TypeError):
            got = "<absent>"
        if got != want:
            out.append(f"{key}: {got!r} != {want!r}")
    out += [f"no key {k}" for k in expect.get("keys", []) if k not in result]
    out += [f"key {k} present" for k in expect.get("no_keys", []) if k in result]
    for key, text in expect.get("has", {}).items():
        if text.lower() not in str(result.get(key, "")).lower():
            out.append(f"{key} lacks {text!r}: {str(result.get(key))[:160]!r}")
    for key, items in expect.get("set", {}).items():
        if set(result.get(key, [])) != set(items):
            out.append(f"{key}: {result.get(key)!r} != {items!r}")
    if "names" in expect and [s.get("name") for s in result.get("skills", [])] != expect["names"]:
        out.append(f"names: {[s.get('name') for s in result.get('skills', [])]!r} != {expect['names']!r}")
    for key, most in expect.get("max_len", {}).items():
        if len(str(dig(result, key))) > most:
            out.append(f"{key} is longer than {most}")
    for index, keys in expect.get("item_no_keys", {}).items():
        out += [f"skills.{index}.{k} present" for k in keys if k in result["skills"][int(index)]]
    for path, text in expect.get("files", {}).items():
        try:
            got_text: Optional[str] = cap.read_text(path)
        except CapError as e:
            got_text = f"<{e.code}>"
        if got_text != text:
            out.append(f"file {path}: {str(got_text)[:80]!r}")
    out += [f"{p} exists" for p in expect.get("absent", []) if cap.exists(p)]
    for path, mode in expect.get("host_mode", {}).items():
        got_mode = (host / path).stat().st_mode & 0o777 if host else None
        if got_mode != mode:
            out.append(f"mode of {path}: {oct(got_mode or 0)} != {oct(mode)}")
    out += [f"{p} is no longer a link" for p in expect.get("is_link", []) if not (host and (host / p).is_symlink())]
    return out


class FileOperationsVectorsBase:
    backend = ""

    def area(self, tag: str) -> "tuple[FsCap, Optional[Path]]":
        raise NotImplementedError

    def test_vectors(self) -> None:
        self_: Any = self
        data = vectors("file_operations")
        ran = 0
        for v in data["vectors"]:
            if self.backend != "disk" and (v.get("disk_only") or v.get("links") or v.get("chmod")):
                continue
            with self_.subTest(v["hermes_test"]):
                cap, host = self.area("fo")
                for path, spec in v["tree"].items():
                    cap.write(path, body(spec))
                for link, target in v.get("links", []):
                    os.symlink(host / target, host / link)  # type: ignore[operator]
                for path, mode in v.get("chmod", {}).items():
                    (host / path).chmod(mode)  # type: ignore[operator]
                call = v["call"]
                saved = os.umask(call["umask"]) if "umask" in call else None
                try:
                    result = getattr(CapFileTools(cap), call["tool"])(**call["args"])
                finally:
                    if saved is not None:
                        os.umask(saved)
                against_hermes = misses(v["hermes"], result, cap, host)
                if "diverges" in v:
                    self_.assertEqual(misses(v["cap"], result, cap, host), [], result)
                    self_.assertNotEqual(against_hermes, [], f"flagged but answers as Hermes: {v['diverges']}")
                else:
                    self_.assertEqual(against_hermes, [], result)
                ran += 1
        self_.assertGreaterEqual(ran, 32 if self.backend == "disk" else 26)


@unittest.skipUnless(DISK_CAP and DISK_ROOT, "needs a live vault")
class FileOperationsVectorsDisk(FileOperationsVectorsBase, unittest.TestCase):
    backend = "disk"

    def area(self, tag: str) -> "tuple[FsCap, Optional[Path]]":
        return disk_area(tag)


@unittest.skipUnless(R2_CAP, "needs a live vault")
class FileOperationsVectorsR2(FileOperationsVectorsBase, unittest.TestCase):
    backend = "r2"

    def area(self, tag: str) -> "tuple[FsCap, Optional[Path]]":
        return r2_area(tag), None


if __name__ == "__main__":
    unittest.main()
