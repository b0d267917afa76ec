"""Where the project checkout is: the directory holding ``glue_scripts/`` and ``lib/glue_incremental``.

The tools run from the checkout they operate on, also when installed non-editable
(CI's ``pip install '.[deploy]'`` puts this package in site-packages, far from any
checkout). The root is, in order: an explicit ``root`` (``deploy --root``),
``$GLUE_INCREMENTAL_ROOT``, the working directory or its nearest parent that holds
the project. Nothing is derived from where this file is installed.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT_ENV = "GLUE_INCREMENTAL_ROOT"
MARKERS = ("glue_scripts", "lib/glue_incremental")


class ProjectNotFound(LookupError):
    """No project checkout at the given place, nor at the working directory or above it."""


def is_project(path: Path) -> bool:
    return all((path / marker).is_dir() for marker in MARKERS)


def project_root(root: str | os.PathLike[str] | None = None) -> Path:
    """The project checkout; raises ProjectNotFound (one line, says what to do) if none."""
    explicit = root or os.environ.get(ROOT_ENV)
    if explicit:
        path = Path(explicit).resolve()
        if not is_project(path):
            source = "--root" if root else f"${ROOT_ENV}"
            raise ProjectNotFound(
                f"{source} {path} is not a project checkout: it has no "
                + " and no ".join(
                    f"{marker}/" for marker in MARKERS if not (path / marker).is_dir()
                )
            )
        return path
    here = Path.cwd().resolve()
    for candidate in (here, *here.parents):
        if is_project(candidate):
            return candidate
    raise ProjectNotFound(
        f"no project checkout at {here} or above it (a directory with glue_scripts/ and "
        f"lib/glue_incremental/): run from the repository, or pass --root or set ${ROOT_ENV}"
    )
