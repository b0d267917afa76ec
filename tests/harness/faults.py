"""Test doubles for ``run.context.hooks``: crashes at named steps, counting, S3-like renames."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from glue_incremental.run.context import hooks
from glue_incremental.targets.parquet import writer


class Crash(RuntimeError):
    """A simulated crash: raised by a hook, never by the library."""


@dataclass
class StepCounter:
    """Records every hook point reached, in order."""

    steps: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def __call__(self, name: str, details: Mapping[str, Any]) -> None:
        self.steps.append((name, dict(details)))

    def names(self, prefix: str = "") -> list[str]:
        return [name for name, _ in self.steps if name.startswith(prefix)]


@dataclass
class CrashAtStep:
    """Raises ``Crash`` at the ``k``-th (1-based) point whose name starts with ``prefix``."""

    k: int
    prefix: str = ""
    seen: int = 0
    crashed_at: str | None = None

    def __call__(self, name: str, details: Mapping[str, Any]) -> None:
        if not name.startswith(self.prefix):
            return
        self.seen += 1
        if self.seen == self.k:
            self.crashed_at = name
            raise Crash(f"crash at step {self.k}: {name} {dict(details)}")


DEEP = os.environ.get("HYPOTHESIS_PROFILE") == "deep"
# Crash points a sweep takes outside `make test-deep` (which takes every step).
QUICK_CRASH_POINTS = 8


def crash_points(names: Sequence[str], *, quick: int = QUICK_CRASH_POINTS) -> list[int]:
    """The 1-based steps of ``names`` a sweep crashes at.

    ``make test-deep``: every step. Otherwise (``make test``, ``make test-rest``): the
    first step of each kind and the last one; when those are more than ``quick``, ``quick``
    of them spread evenly from first to last, so a kind may then go uncrashed there.
    """
    if DEEP:
        return list(range(1, len(names) + 1))
    first_of_kind = {name: index for index, name in reversed(list(enumerate(names, 1)))}
    candidates = sorted({*first_of_kind.values(), len(names)})
    if len(candidates) <= quick:
        return candidates
    last = len(candidates) - 1
    picks = {round(i * last / (quick - 1)) for i in range(quick)}
    return [candidates[i] for i in sorted(picks)]


def crash_at(name: str, *, times: int = 1) -> Callable[[str, Mapping[str, Any]], None]:
    """A handler raising ``Crash`` the ``times``-th time the point ``name`` is reached."""
    return CrashAtStep(times, prefix=name)


def on_point(name: str, action: Callable[..., None]) -> Callable[[str, Mapping[str, Any]], None]:
    """A handler calling ``action(**details)`` whenever the point ``name`` is reached."""

    def handler(reached: str, details: Mapping[str, Any]) -> None:
        if reached == name:
            action(**details)

    return handler


class CopyThenDeleteFileSystem:
    """S3 semantics over a real file system: a rename is a copy, then a delete of the source.

    A hook point separates the two, so a crash can leave both copies (S3A's own
    rename is one opaque call: the ``s3a`` file system crashes around it, not inside).
    """

    def __init__(self, inner: writer.HadoopFileSystem) -> None:
        self._inner = inner

    def rename_file(self, source: str, destination: str) -> None:
        self._inner.mkdirs(destination.rsplit("/", 1)[0])
        self._copy(source, destination)
        hooks.point("fs.copied", source=source, destination=destination)
        self._inner.delete_file(source)

    def _copy(self, source: str, destination: str) -> None:
        inner = self._inner
        hadoop_fs = inner._jvm.org.apache.hadoop.fs
        copied = hadoop_fs.FileUtil.copy(
            inner._fs,
            inner._Path(source),
            inner._fs,
            inner._Path(destination),
            False,
            True,
            inner._conf,
        )
        if not copied:
            raise OSError(f"could not copy {source} to {destination}")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


FILESYSTEMS = ("local", "copy_then_delete", "s3a")


def use_filesystem(monkeypatch: Any, kind: str) -> None:
    """Make the writer see the file system ``kind`` (one of ``FILESYSTEMS``)."""
    if kind in ("local", "s3a"):  # s3a: the real S3AFileSystem, chosen by the target's URI
        return
    if kind == "copy_then_delete":
        real = writer.open_filesystem
        monkeypatch.setattr(
            writer, "open_filesystem", lambda spark, uri: CopyThenDeleteFileSystem(real(spark, uri))
        )
        return
    raise ValueError(f"unknown file system {kind!r}")


def install_kill_from_environment() -> None:
    """SIGKILL this process at hook step ``GLUE_INCREMENTAL_TEST_KILL_AT_STEP`` (1-based),
    or at the first point named ``GLUE_INCREMENTAL_TEST_KILL_AT_POINT``.

    Used by ``killpoint/sitecustomize.py`` in subprocesses; the count of steps a
    run reaches is written to ``GLUE_INCREMENTAL_TEST_STEP_LOG`` when set.
    """
    step = int(os.environ.get("GLUE_INCREMENTAL_TEST_KILL_AT_STEP") or 0)
    # ``GLUE_INCREMENTAL_TEST_KILL_AT_POINT=recover.delete#2``: the second time that point is reached.
    point, _, nth = (os.environ.get("GLUE_INCREMENTAL_TEST_KILL_AT_POINT") or "").partition("#")
    wanted = int(nth or 1)
    log_path = os.environ.get("GLUE_INCREMENTAL_TEST_STEP_LOG")
    seen = 0
    reached = 0

    def handler(name: str, details: Mapping[str, Any]) -> None:
        nonlocal seen, reached
        seen += 1
        reached += name == point
        if log_path:
            with open(log_path, "a") as log:
                log.write(f"{seen} {name}\n")
        if seen == step or (point and name == point and reached == wanted):
            os.kill(os.getpid(), signal.SIGKILL)

    hooks.install(handler)
