"""``deploy`` ships a team's own package (``packages/<name>/``) for ``--transform``."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest
from glue_incremental_tools import deploy, team_packages

MASKS = "from pyspark.sql import functions as F\n\n\ndef mask(rows):\n    return rows.withColumn('email', F.lit(None))\n"


def checkout(tmp_path: Path, masks: str = MASKS) -> Path:
    """A checkout with the real library, one script and the team package ``teams_orders``."""
    root = tmp_path / "repo"
    (root / "glue_scripts").mkdir(parents=True)
    (root / "lib").mkdir()
    (root / "lib" / "glue_incremental").symlink_to(
        Path(deploy.project_root(), "lib", "glue_incremental")
    )
    (root / "glue_scripts" / "incremental_load.py").write_text("print('ok')\n")
    package = root / "packages" / "teams_orders"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "masks.py").write_text(masks)
    (root / "packages" / "notes").mkdir()  # not a package: no __init__.py
    return root


def test_a_team_package_is_zipped_into_the_release_beside_the_library(tmp_path, monkeypatch):
    root = checkout(tmp_path)

    artifacts = {a.name: a for a in deploy.build_artifacts(root)}

    package = artifacts["teams_orders.zip"]
    assert package.kind == "package" and "notes.zip" not in artifacts
    manifest = deploy.build_manifest(list(artifacts.values()), "b")
    release = deploy.deployment_version(list(artifacts.values()))
    assert {f["key"] for f in manifest["files"]} >= {
        f"releases/{release}/teams_orders.zip",
        f"releases/{release}/glue_incremental.zip",
    }
    assert package.data == team_packages.build_package_zip(root / "packages" / "teams_orders")
    zipped = tmp_path / "teams_orders.zip"
    zipped.write_bytes(package.data)
    monkeypatch.setattr(sys, "path", [str(zipped), *sys.path])
    assert callable(importlib.import_module("teams_orders.masks").mask)
    for name in ("teams_orders.masks", "teams_orders"):
        sys.modules.pop(name, None)


def test_a_team_package_that_does_not_compile_stops_the_deploy_naming_it(tmp_path):
    root = checkout(tmp_path, masks="def mask(rows:\n    return rows\n")

    with pytest.raises(
        deploy.DeployError, match=r"packages/teams_orders/masks.py does not compile"
    ):
        deploy.build_artifacts(root)


def test_without_a_packages_directory_there_is_nothing_to_ship(tmp_path):
    assert team_packages.package_dirs(tmp_path) == []
