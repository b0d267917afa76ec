"""The driver's round trips to its JVM, and the Hadoop file systems it opens, over a block.

Every py4j command is one round trip between the Python driver and the JVM, paid on every
run whatever its size: a call (``c``), a name looked up (``r``: PySpark resolves
``functions.col`` and each ``jvm.a.b.C`` segment this way), an object made (``i``), a Java
object released by Python's garbage collector (``m``). ``filesystems_opened`` counts the
Hadoop file systems the library looked up in the JVM (``io.hadoop_fs.open_in_jvm``: once
per root and process, so 0 for a root an earlier run of the process opened). Observes
only: the counted code runs unchanged.
"""

from __future__ import annotations

import gc
import threading
import time
import traceback
from collections import Counter
from typing import Any

from glue_incremental.io import hadoop_fs
from py4j.java_gateway import GatewayClient

# py4j's protocol letters (py4j.protocol), as the figures name them.
COMMAND_KINDS = {"c": "call", "r": "lookup", "m": "release", "i": "construct", "a": "array"}


class Py4jCalls:
    """Counts, inside the ``with`` block, py4j commands by kind and file systems opened;
    with ``sites``, also by the library line that sent them (where to cut)."""

    def __init__(self, *, sites: bool = False) -> None:
        self.by_kind: Counter[str] = Counter()
        self.by_site: Counter[str] | None = Counter() if sites else None
        self.filesystems_opened = 0
        self._lock = threading.Lock()
        self._send: Any = None
        self._open: Any = None

    @property
    def round_trips(self) -> int:
        return sum(self.by_kind.values())

    def figures(self) -> dict[str, Any]:
        return {
            "py4j_round_trips": self.round_trips,
            "py4j_by_kind": dict(sorted(self.by_kind.items())),
            "filesystems_opened": self.filesystems_opened,
        }

    def __enter__(self) -> Py4jCalls:
        _release_earlier_garbage()
        send, open_fs = GatewayClient.send_command, hadoop_fs.open_in_jvm
        self._send, self._open = send, open_fs

        def counted_send(client: Any, command: str, *args: Any, **kwargs: Any) -> Any:
            kind = COMMAND_KINDS.get(command[:1], "other")
            site = _library_site() if self.by_site is not None else ""
            with self._lock:
                self.by_kind[kind] += 1
                if self.by_site is not None:
                    self.by_site[site] += 1
            return send(client, command, *args, **kwargs)

        def counted_open(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                self.filesystems_opened += 1
            return open_fs(*args, **kwargs)

        GatewayClient.send_command = counted_send  # type: ignore[method-assign]
        hadoop_fs.open_in_jvm = counted_open
        return self

    def __exit__(self, *exc_info: object) -> None:
        GatewayClient.send_command = self._send  # type: ignore[method-assign]
        hadoop_fs.open_in_jvm = self._open


def _release_earlier_garbage(timeout_seconds: float = 10.0) -> None:
    """Release now, uncounted, the Java objects of code that ran before the block.

    py4j's finalizer thread sends releases from a queue, when it gets to them: a block
    once counted 121 releases of an earlier run's objects.
    """
    from pyspark import SparkContext

    gc.collect()
    gateway = SparkContext._gateway
    queue = getattr(getattr(gateway, "_gateway_client", None), "finalizer_deque", None)
    deadline = time.monotonic() + timeout_seconds
    while queue and time.monotonic() < deadline:
        time.sleep(0.01)


def _library_site() -> str:
    frames = [f for f in traceback.extract_stack()[:-2] if "/glue_incremental/" in f.filename]
    if not frames:
        return "(outside the library: a release, or the caller)"
    frame = frames[-1]
    return f"{frame.filename.split('/glue_incremental/', 1)[1]}:{frame.lineno} {frame.name}"
