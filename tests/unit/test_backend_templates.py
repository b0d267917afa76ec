"""Every root with a partial S3 backend has a committed backend file to init it with."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# What a partial `backend "s3"` leaves to -backend-config (the roots set use_lockfile, encrypt).
BACKEND_KEYS = {"bucket", "key", "region"}


def _partial_s3_roots() -> list[Path]:
    return sorted(
        path.parent
        for path in (ROOT / "terraform").rglob("versions.tf")
        if ".terraform" not in path.parts and re.search(r'backend\s+"s3"', path.read_text())
    )


def test_every_partial_s3_backend_root_commits_a_backend_file_with_bucket_key_and_region():
    roots = _partial_s3_roots()
    assert {r.relative_to(ROOT).as_posix() for r in roots} >= {
        "terraform/ci",
        "terraform/environments/aws",
    }
    for root in roots:
        files = sorted(root.glob("*.backend.hcl"))
        assert files, f"{root.relative_to(ROOT)} has no committed *.backend.hcl"
        for path in files:
            keys = set(re.findall(r"^(\w+)\s*=", path.read_text(), flags=re.MULTILINE))
            assert keys == BACKEND_KEYS, f"{path.relative_to(ROOT)}: {sorted(keys)}"
