"""The one exception the client raises, and the codes it falls back to."""

from __future__ import annotations

from typing import Any, Optional, Tuple


class CapError(Exception):
    """A refusal from the vault, or a failure to reach it.

    ``code`` is the vault's wire code (``path_escapes``, ``absolute_path``,
    ``invalid_path``, ``outside_root``, ``forbidden``, ``no_such_cap``,
    ``not_found``, ``conflict``, ``precondition_failed``, ``too_large``,
    ``range_not_satisfiable``, ``bad_request``, ``unavailable``, ...).
    ``status`` is the HTTP status, or ``None`` when the request never got an
    answer. Two codes come from this client rather than the server:
    ``unavailable`` with ``status=None`` (network failure or timeout) and
    ``bad_response`` (the server answered something this client cannot read).

    The message never contains the cap's token.

    Example::

        try:
            fs.read("/etc/passwd")
        except CapError as e:
            print(e.code, e.status, e.message)   # absolute_path 400 absolute paths forbidden
    """

    def __init__(self, code: str, message: str, status: Optional[int] = None) -> None:
        super().__init__(code, message)
        self.code = code
        self.message = message
        self.status = status

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"

    def __repr__(self) -> str:
        return f"CapError(code={self.code!r}, message={self.message!r}, status={self.status!r})"

    def __reduce__(self) -> Tuple[Any, ...]:
        return (CapError, (self.code, self.message, self.status))


# When the server sends no JSON error body, fall back to the code its status implies.
_STATUS_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    409: "conflict",
    411: "length_required",
    412: "precondition_failed",
    413: "too_large",
    416: "range_not_satisfiable",
    507: "quota_exceeded",
    503: "unavailable",
}
