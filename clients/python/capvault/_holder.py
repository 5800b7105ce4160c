"""Holder keys for holder-bound caps: a key file, and a DPoP proof (RFC 9449) per request."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import time
from typing import Any, Dict, Mapping, Optional, Union

from . import _ed25519


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class HolderKey:
    """The private key a holder-bound cap names (Ed25519, as a JWK key file holds it).

    ``capvault key new PATH`` writes one; pass it as ``FsCap(url, holder=HolderKey.from_file(PATH))``
    and every request carries a fresh proof. The private part is never shown by ``repr``.

    Example::

        key = HolderKey.from_file(os.environ["CAPVAULT_KEY_FILE"])
        fs = FsCap(os.environ["CAPVAULT_CAP"], holder=key)
    """

    def __init__(self, jwk: Mapping[str, Any]) -> None:
        if jwk.get("kty") != "OKP" or jwk.get("crv") != "Ed25519" or not isinstance(jwk.get("d"), str):
            raise ValueError("a holder key file here is a private Ed25519 JWK (capvault key new)")
        seed = _unb64url(str(jwk["d"]))
        x = _b64url(_ed25519.public_key(seed))
        if not hmac.compare_digest(x, str(jwk.get("x", ""))):
            raise ValueError("the key file's public part does not match its private part")
        self._seed = seed
        self.public_jwk: Dict[str, str] = {"kty": "OKP", "crv": "Ed25519", "x": x}

    @classmethod
    def from_file(cls, path: Union[str, "os.PathLike[str]"]) -> "HolderKey":
        with open(path, "rb") as f:
            raw = f.read(4097)
        if len(raw) > 4096:
            raise ValueError("not a key file: too big")
        return cls(json.loads(raw))

    @property
    def jkt(self) -> str:
        """The RFC 7638 thumbprint a bound cap's info shows."""
        canonical = json.dumps(
            {"crv": "Ed25519", "kty": "OKP", "x": self.public_jwk["x"]}, separators=(",", ":"), sort_keys=True
        )
        return _b64url(hashlib.sha256(canonical.encode("ascii")).digest())

    def proof(self, method: str, htu: str, token: str, body: Optional[bytes]) -> str:
        """A DPoP proof for one request; ``body`` None for GET and DELETE (no ``content_digest``)."""
        header = {"typ": "dpop+jwt", "alg": "EdDSA", "jwk": self.public_jwk}
        claims: Dict[str, Any] = {
            "jti": _b64url(os.urandom(16)),
            "htm": method,
            "htu": htu,
            "iat": int(time.time()),
            "ath": _b64url(hashlib.sha256(token.encode("ascii")).digest()),
        }
        if body is not None:
            digest = base64.b64encode(hashlib.sha256(body).digest()).decode("ascii")
            claims["content_digest"] = f"sha-256=:{digest}:"
        signing_input = ".".join(
            _b64url(json.dumps(part, separators=(",", ":")).encode("utf-8")) for part in (header, claims)
        )
        return f"{signing_input}.{_b64url(_ed25519.sign(self._seed, signing_input.encode('ascii')))}"

    def __repr__(self) -> str:
        return f"HolderKey(jkt={self.jkt!r})"
