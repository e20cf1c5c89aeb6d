"""Device copies of the read-only lookup tables (seqno table g, profile index map and offsets).

They change only when the Milnor basis grows, and then `algebra` builds new arrays rather than writing into
old ones, so a copy is keyed by the host array's identity: the cache holds a reference to the host array
(its id cannot be reused while cached), and a table written in place would be a contract breach that
NASSAU_GPU_VERIFY reports.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

import numpy as np

from gpu.device import Device

#: Tables kept per device (several bases, e.g. profile subalgebras, may be in use at once).
SIZE = 16


class TableCache:
    """LRU of device copies of host tables, keyed by the host array's identity."""

    def __init__(self, device: Device, size: int = SIZE) -> None:
        self.device = device
        self.size = size
        self._lock = threading.Lock()
        self._entries: OrderedDict[int, tuple[np.ndarray, Any]] = OrderedDict()

    def get(self, host: np.ndarray) -> Any:
        with self._lock:
            entry = self._entries.get(id(host))
            if entry is not None and entry[0] is host:
                self._entries.move_to_end(id(host))
                return entry[1]
        copy = self.device.upload(host)
        with self._lock:
            self._entries[id(host)] = (host, copy)
            self._entries.move_to_end(id(host))
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        return copy


def tables(device: Device) -> TableCache:
    """The device's table cache."""
    return device.state("tables", lambda: TableCache(device))
