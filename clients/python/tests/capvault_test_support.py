"""What the capvault client's test modules share: the live caps from the
environment, a proxy-free FsCap, the token-hygiene assertions, and the base
of the live tests (each in its own fresh subfolder, through its own subdir cap).
Not a test module itself (no ``test_`` prefix).
"""

from __future__ import annotations

import os
import traceback
import unittest
import uuid
from typing import Any, Callable


# The package under test: the installed one (npm test installs it into a fresh
# venv), or clients/python/capvault when run from clients/python.
from capvault import CapError, FsCap

R2_CAP = os.environ.get("CAPVAULT_TEST_CAP", "").strip()
DISK_CAP = os.environ.get("CAPVAULT_TEST_DISK_CAP", "").strip()

FAKE_TOKEN = "abcdefghijklmnopqrstuvwxyz234567"


def local_cap(url: str, **kw: Any) -> FsCap:
    """An FsCap that ignores *_proxy variables: the vaults under test are local."""
    return FsCap(url, proxies={}, **kw)


def token_of(cap: FsCap) -> str:
    return cap.url.rsplit("/", 1)[-1]


def all_exception_text(exc: BaseException) -> str:
    """Everything an exception would show a log, a traceback or a pickle."""
    parts = [str(exc), repr(exc), repr(exc.args)]
    parts.extend("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).splitlines())
    for name in ("code", "message", "status"):
        parts.append(repr(getattr(exc, name, None)))
    return "\n".join(parts)


class TokenHygiene:
    """Mixin: assert that nothing a cap raises or prints contains its token."""

    def assertNoToken(self, exc: BaseException, *caps: FsCap) -> None:  # noqa: N802
        text = all_exception_text(exc)
        for cap in caps:
            token = token_of(cap)
            self.assertNotIn(token, text, "an exception leaked the cap token")
        # urllib's HTTPError keeps the full URL; it must not ride along as context.
        self.assertIsNone(exc.__cause__)
        self.assertIsNone(exc.__context__)

    def assertRefused(self, code: str, fn: Callable[[], Any], *caps: FsCap) -> CapError:  # noqa: N802
        with self.assertRaises(CapError) as ctx:  # type: ignore[attr-defined]
            fn()
        self.assertEqual(ctx.exception.code, code, f"expected {code}, got {ctx.exception!r}")  # type: ignore[attr-defined]
        self.assertNoToken(ctx.exception, *caps)
        return ctx.exception


# ---------------------------------------------------------------------------
# The hermes-fs-as-cap test vector, first (the bridge document this package grew from)
# ---------------------------------------------------------------------------




class LiveBase(unittest.TestCase, TokenHygiene):
    ROOT_URL = ""

    def setUp(self) -> None:
        self.root = local_cap(self.ROOT_URL, timeout=30)
        folder = f"pytest-{self._testMethodName[5:30]}-{uuid.uuid4().hex[:10]}"
        self.fs = self.root.subdir(folder, label=f"python {self._testMethodName}")
        self.addCleanup(self._revoke_quietly, self.fs)

    @staticmethod
    def _revoke_quietly(cap: FsCap) -> None:
        try:
            cap.revoke()
        except CapError:
            pass

