"""Named steps of a run where tests inject faults (``hooks.point``); a no-op in production.

Its own module so that the writers (``writer``, ``publish``, ``iceberg``) can mark their
steps without importing the run context (``runtime``). ``run.context.hooks`` is the same object.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping

HookHandler = Callable[[str, Mapping[str, object]], None]


class HookPoints:
    """Named steps of a run where tests inject faults; a no-op unless a handler is installed.

    The library calls ``hooks.point("publish.move", source=..., destination=...)``
    just *before* each step that changes durable state, so a handler that
    raises (or kills the process) at the k-th point leaves the state exactly
    as a crash before that step would. Handlers are test doubles
    (``tests/harness/faults.py``); production installs none. Process-wide, so a
    subprocess can install one at start-up (``sitecustomize``).
    """

    def __init__(self) -> None:
        self._handlers: list[HookHandler] = []

    def point(self, name: str, **details: object) -> None:
        for handler in list(self._handlers):
            handler(name, details)

    @contextlib.contextmanager
    def installed(self, handler: HookHandler) -> Iterator[HookHandler]:
        """Call ``handler(name, details)`` at every point while the block runs."""
        self.install(handler)
        try:
            yield handler
        finally:
            self.uninstall(handler)

    def install(self, handler: HookHandler) -> None:
        self._handlers.append(handler)

    def uninstall(self, handler: HookHandler) -> None:
        with contextlib.suppress(ValueError):
            self._handlers.remove(handler)


hooks = HookPoints()
