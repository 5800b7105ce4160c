"""capvault: a stdlib-only Python client for a capvault capability.

``from capvault import FsCap, CapError`` is the whole client (see
:mod:`capvault.client`); :mod:`capvault.hermes` gives Hermes-shaped call sites
(``open``, ``listdir``, a narrower scope for a sub-tool) on top of a cap.

Python 3.9+, no dependencies beyond the standard library.
"""

from . import client
from .client import (
    DEFAULT_TIMEOUT,
    RIGHTS,
    CapError,
    CapInfo,
    ChildInfo,
    Entry,
    FileStat,
    FsCap,
    HolderKey,
    Version,
    WatchEvent,
    WriteResult,
    __version__,
)

__all__ = [*client.__all__, "__version__"]
