"""What a custom job script got wrong: each a one-line ``GlueIncrementalError``, raised
before anything is written or committed."""

from __future__ import annotations

from collections.abc import Sequence

from glue_incremental.errors import GlueIncrementalError


class UndeclaredName(GlueIncrementalError, LookupError):
    """The script used a source or target it did not declare; nothing was written."""

    def __init__(self, kind: str, name: str, declared: Sequence[str]) -> None:
        self.kind, self.name, self.declared = kind, name, tuple(declared)
        shown = ", ".join(sorted(self.declared)) or "none"
        super().__init__(
            f"{kind} {name!r} is not declared by this job (declared {kind}s: {shown}); "
            "nothing was written or committed"
        )


class NothingWritten(GlueIncrementalError, RuntimeError):
    """The script read an increment and ended without writing it to every declared target."""

    def __init__(self, sources: Sequence[str], targets: Sequence[str]) -> None:
        self.sources, self.targets = tuple(sources), tuple(targets)
        super().__init__(
            f"the job read new data from {', '.join(self.sources)} but wrote nothing to "
            f"{', '.join(self.targets)}; nothing was committed (write every declared target, "
            "an empty frame if need be)"
        )


class WrittenTwice(GlueIncrementalError, RuntimeError):
    """A target was written twice in one run: each write is one publish of the whole result."""

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(
            f"target {name!r} was already written in this run: write each target once, "
            "with the whole result"
        )


class DeclarationError(GlueIncrementalError, ValueError):
    """A source or target declaration that cannot work; ``name`` is the declared name."""

    def __init__(self, name: str, message: str) -> None:
        self.name = name
        super().__init__(message)


class NoSchemaYet(GlueIncrementalError, LookupError):
    """A dataset with no file yet and no declared schema: there is nothing to read a frame of."""

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(
            f"source {name!r} has no files yet and declares no schema: declare "
            "Dataset(schema='column type, ...') so a run before its first file reads empty"
        )


class ScriptExited(GlueIncrementalError, RuntimeError):
    """The script called ``sys.exit`` inside its block: the run ends failed, not half done."""

    def __init__(self, code: object) -> None:
        self.code = code
        super().__init__(
            f"the script called sys.exit({code!r}) inside its incremental_job block; nothing "
            "was written or committed (return from the block to end the run)"
        )
