"""test_credential_files.py's traversal and master-store cases (hermes_vectors/credential_files.json) on caps.

Hermes asks register_credential_file(path) whether a skill-declared file under
HERMES_HOME may be mounted; here the credential store is a cap and a file is
mountable when the vault stats it as a file. Disk (with the link leading out)
and R2. An answer other than Hermes' must be flagged, and a flag whose answer
agrees with Hermes fails the run.
"""

from __future__ import annotations

import os
import unittest
from pathlib import Path
from typing import Any, Optional

from capvault import CapError, FsCap
from test_hermes_plugin import DISK_CAP, DISK_ROOT, R2_CAP, disk_area, r2_area, vectors

HOME_FILES = ("token.json", "oauth.json", "creds/oauth.json", "google_token.json", ".env", "auth.json",
              ".anthropic_oauth.json", "webhook_subscriptions.json", "cache/bws_cache.json", "mcp-tokens/srv.json")
BESIDE = ("sensitive.json", "secret.json", ".ssh/id_rsa", "absolute.json", "abs.json")


def answer(cap: FsCap, path: str) -> str:
    try:
        return "ok" if cap.stat(path).get("type") == "file" else "not_a_file"
    except CapError as e:
        return e.code


class CredentialFilesVectorsBase:
    backend = ""

    def area(self) -> "tuple[FsCap, Optional[Path]]":
        raise NotImplementedError

    def test_vectors(self) -> None:
        self_: Any = self
        area, host = self.area()
        for name in HOME_FILES:
            area.write(f"home/{name}", "SECRET-" + name)
        for name in BESIDE:
            area.write(name, "OUTSIDE-" + name)
        area.write("home/tokens/google_token.json", "{}")
        if host:
            os.symlink(host / "sensitive.json", host / "home" / "evil_link.json")
        home, tokens = area.subdir("home"), area.subdir("home/tokens")
        outside = str(host) if host else "/vault/outside"
        data = vectors("credential_files")
        ran = 0
        for v in data["vectors"]:
            if v.get("disk_only") and not host:
                continue
            with self_.subTest(v["hermes_test"]):
                path = v["path"].replace("{outside}", outside)
                got = answer(home, path)
                self_.assertEqual(got, v["cap"])
                agrees = (got == "ok") == v["hermes"]
                self_.assertEqual(agrees, "diverges" not in v, v.get("diverges", "differs from Hermes without a flag"))
                if "tokens_cap" in v:  # the cap-shaped store: only per-service tokens exist for it
                    got_tokens = answer(tokens, path)
                    self_.assertEqual(got_tokens, v["tokens_cap"])
                    self_.assertEqual(got_tokens == "ok", v["hermes"])
                ran += 1
        self_.assertEqual(ran, 20 if host else 19)
        if host:
            self_.assertEqual((host / "sensitive.json").read_text(), "OUTSIDE-sensitive.json")


@unittest.skipUnless(DISK_CAP and DISK_ROOT, "needs a live vault")
class CredentialFilesVectorsDisk(CredentialFilesVectorsBase, unittest.TestCase):
    def area(self) -> "tuple[FsCap, Optional[Path]]":
        return disk_area("cf")


@unittest.skipUnless(R2_CAP, "needs a live vault")
class CredentialFilesVectorsR2(CredentialFilesVectorsBase, unittest.TestCase):
    def area(self) -> "tuple[FsCap, Optional[Path]]":
        return r2_area("cf"), None


if __name__ == "__main__":
    unittest.main()
