"""The teams' own Python packages (``packages/<name>/``), zipped for Glue's ``--extra-py-files``.

Each directory under ``packages/`` holding an ``__init__.py`` is one package a pipeline's
``transform`` may name; ``deploy`` compiles it with everything else, zips it as
``<name>.zip`` (same sources, same bytes) and publishes it in the release
(``releases/<id>/<name>.zip``), where Terraform's ``transform.package = "<name>.zip"``
points. No ``packages/`` directory: nothing to ship. Design: ``docs/transforms.md``.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

PACKAGES_DIR = "packages"
# 1980-01-01 is the earliest time a zip entry can carry (as the library's zip).
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)


def package_dirs(root: Path) -> list[Path]:
    """The team packages of the checkout at ``root``, by name."""
    folder = root / PACKAGES_DIR
    if not folder.is_dir():
        return []
    return sorted(path for path in folder.iterdir() if (path / "__init__.py").is_file())


def package_sources(package: Path) -> list[Path]:
    return sorted(
        (path for path in package.rglob("*.py") if "__pycache__" not in path.parts),
        key=lambda path: path.relative_to(package).as_posix(),
    )


def build_package_zip(package: Path) -> bytes:
    """``package`` as ``<name>/...`` in a zip whose bytes depend only on the sources."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in package_sources(package):
            info = zipfile.ZipInfo(
                f"{package.name}/{path.relative_to(package).as_posix()}", ZIP_EPOCH
            )
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3
            info.external_attr = 0o100644 << 16
            archive.writestr(info, path.read_bytes(), compresslevel=9)
    return buffer.getvalue()
