""":meth:`FsCap.watch <capvault.FsCap.watch>`: the change stream, resumed across reconnects."""

from __future__ import annotations

import http.client
import json
import time
from typing import Any, Callable, Dict, Iterator, Optional

from ._errors import CapError
from ._events import MalformedStream, server_events
from ._transport import _VaultTransport, _describe
from ._types import CapInfo, WatchEvent

#: Seconds before reconnecting after a change stream that brought nothing, so a
#: stream the vault ends at once (a full root ends its oldest) is not a request loop.
_IDLE_RECONNECT_SECONDS = 1.0


class _WatchMethod(_VaultTransport):
    """:meth:`watch`, for :class:`~capvault.FsCap`."""

    info: Callable[[], CapInfo]  # FsCap's: asked after each stream

    def watch(self, since: Optional[str] = None, timeout: Optional[float] = None) -> Iterator[WatchEvent]:
        """The changes inside this cap's subtree as they are committed (needs ``read``), as a generator.

        First the changes after version ``since`` (when given), then live ones,
        reconnecting by itself when the vault ends a stream to be resumed.
        When the cap is revoked or expires, raises the vault's ``CapError``
        (``no_such_cap``). ``timeout`` is the seconds to wait for the next
        event (default: for ever); it then raises ``unavailable``. Close the
        generator (or leave the ``for`` loop) to stop.

        Example::

            for change in fs.watch(since=last_seen):
                print(change["version"], change["operation"], change["path"])
        """
        last = since
        while True:
            response = self._open_stream("watch", {"since": last} if last else None, timeout)
            delivered = False
            failure: Optional[CapError] = None
            try:
                for event, data in server_events(response):
                    if event == "resume":
                        resume_at = _version_id(_json_value(data).get("since"))
                        delivered = delivered or resume_at != last
                        last = resume_at
                    elif event is None:
                        change = _json_value(data)
                        last = _version_id(change.get("version"))
                        delivered = True
                        yield change  # type: ignore[misc]
            except MalformedStream as e:
                failure = CapError("bad_response", str(e))
            except (OSError, http.client.HTTPException) as e:
                failure = CapError("unavailable", self._scrub(f"the change stream broke off: {_describe(e)}"))
            finally:
                response.close()
            if failure is not None:  # raised here, so it carries no context that could hold the URL
                raise failure
            self.info()  # a revoked or expired cap raises its no_such_cap here
            if not delivered:
                time.sleep(_IDLE_RECONNECT_SECONDS)


def _version_id(value: Any) -> str:
    """Where to resume, as the vault sent it; anything but a non-empty string would resume live, skipping changes."""
    if not isinstance(value, str) or value == "":
        raise CapError("bad_response", "the vault's change stream named no version to resume from")
    return value


def _json_value(text: str) -> Dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise CapError("bad_response", "the vault's change stream held something that is not a JSON object")
    return value
