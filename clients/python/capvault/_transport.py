"""The client's only HTTP: one request to the vault over urllib, or one open change stream.

Every way a request can fail becomes a :class:`~capvault.CapError`, and the
token is scrubbed from whatever the client raises.
"""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple

from ._errors import _STATUS_CODES, CapError

#: Seconds to wait for the vault to connect and answer, per request.
DEFAULT_TIMEOUT = 30.0


class _RefuseRedirects(urllib.request.HTTPRedirectHandler):
    """The vault never redirects; following one would replay a cap request somewhere else."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        return None


class _VaultTransport:
    """The HTTP half of :class:`~capvault.FsCap`: ``FsCap.__init__`` sets the fields below."""

    _origin: str
    _token: str
    _timeout: float
    _user_agent: str
    _opener: Any
    _holder: Any

    def _signed(self, method: str, url: str, headers: Dict[str, str], body: Any) -> Any:
        """Adds a DPoP proof for a holder-bound cap; a streamed body is read first, as its digest is signed."""
        if self._holder is None:
            return body
        if method in ("GET", "DELETE", "HEAD"):
            covered = None
        else:
            if body is not None and not isinstance(body, (bytes, bytearray)):
                body = body.read()
            covered = bytes(body or b"")
            body = covered
        htu = url.split("?", 1)[0]
        headers["DPoP"] = self._holder.proof(method, htu, self._token, covered)
        return body

    def _request(
        self,
        method: str,
        endpoint: Optional[str],
        *,
        query: Optional[Mapping[str, str]] = None,
        body: Any = None,
        json_body: Any = None,
        headers: Optional[Mapping[str, str]] = None,
        ok: Sequence[int] = (200,),
    ) -> Tuple[int, Mapping[str, str], bytes]:
        url = f"{self._origin}/object/{self._token}"
        if endpoint:
            url += "/" + endpoint
        if query:
            url += "?" + urllib.parse.urlencode(query, quote_via=urllib.parse.quote, safe="")
        all_headers = {"User-Agent": self._user_agent, "Accept": "application/json, */*"}
        if json_body is not None:
            body = json.dumps(json_body).encode("utf-8")
            all_headers["Content-Type"] = "application/json"
            all_headers["Content-Length"] = str(len(body))
        if headers:
            all_headers.update(headers)
        if body is None and method in ("PUT", "POST"):
            body = b""
            all_headers.setdefault("Content-Length", "0")
        body = self._signed(method, url, all_headers, body)
        request = urllib.request.Request(url, data=body, headers=all_headers, method=method)

        # The failure is raised *after* the except blocks so that the
        # exception carries no __context__: urllib's HTTPError holds the full
        # URL (the token) in .url/.filename, and error reporters walk context.
        failure: Optional[CapError] = None
        status = 0
        response_headers: Mapping[str, str] = {}
        data = b""
        try:
            with self._opener.open(request, timeout=self._timeout) as response:
                status = response.status
                response_headers = dict(response.headers.items())
                data = response.read()
        except (OSError, http.client.HTTPException) as e:
            failure = self._failure_of(e)
        if failure is not None:
            raise failure
        if status not in ok:
            raise CapError("bad_response", f"unexpected HTTP status {status}", status)
        return status, response_headers, data

    def _failure_of(self, e: BaseException) -> CapError:
        """The CapError for a request that failed: the vault's refusal (an HTTP error), or ``unavailable``."""
        if isinstance(e, urllib.error.HTTPError):
            try:
                error_body = e.read()
            except Exception:
                error_body = b""
            finally:
                e.close()
            return self._error_from(e.code, error_body)
        reason = e.reason if isinstance(e, urllib.error.URLError) else e
        return CapError("unavailable", self._scrub(f"could not reach the vault: {_describe(reason)}"))

    def _open_stream(self, endpoint: str, query: Optional[Mapping[str, str]], timeout: Optional[float]) -> Any:
        """An open streaming response (the caller closes it); refusals raise as in :meth:`_request`."""
        url = f"{self._origin}/object/{self._token}/{endpoint}"
        if query:
            url += "?" + urllib.parse.urlencode(query, quote_via=urllib.parse.quote, safe="")
        headers = {"User-Agent": self._user_agent, "Accept": "text/event-stream"}
        self._signed("GET", url, headers, None)
        request = urllib.request.Request(url, headers=headers, method="GET")
        failure: Optional[CapError] = None
        try:
            response = self._opener.open(request, timeout=timeout)
        except (OSError, http.client.HTTPException) as e:
            failure = self._failure_of(e)
        if failure is not None:
            raise failure
        if response.status != 200:
            response.close()
            raise CapError("bad_response", f"unexpected HTTP status {response.status}", response.status)
        return response

    def _error_from(self, status: int, raw: bytes) -> CapError:
        code: Optional[str] = None
        message: Optional[str] = None
        try:
            parsed = json.loads(raw.decode("utf-8")) if raw else None
            err = parsed.get("error") if isinstance(parsed, dict) else None
            if isinstance(err, dict):
                if isinstance(err.get("code"), str):
                    code = err["code"]
                if isinstance(err.get("message"), str):
                    message = err["message"]
        except (ValueError, UnicodeDecodeError):
            pass
        if code is None:
            code = _STATUS_CODES.get(status) or ("unavailable" if status >= 500 else "bad_response")
        return CapError(self._scrub(code), self._scrub(message or f"HTTP {status}"), status)

    def _scrub(self, text: str) -> str:
        # Belt and braces: nothing this client raises may carry the token,
        # even if a server or a proxy echoed it back.
        return text.replace(self._token, "***") if self._token else text


def _describe(reason: Any) -> str:
    if isinstance(reason, BaseException):
        detail = getattr(reason, "strerror", None) or str(reason) or ""
        name = type(reason).__name__
        return f"{name}: {detail}" if detail else name
    return str(reason)


def _json_object(raw: bytes) -> Dict[str, Any]:
    try:
        value = json.loads(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        value = None
    if not isinstance(value, dict):
        raise CapError("bad_response", "the vault answered something that is not a JSON object")
    return value
