"""``--transform`` beside ``--delete_marker`` on a file source."""

from __future__ import annotations

import pytest
from glue_incremental.deletes.markers import DeleteMarker
from glue_incremental.transforms.function import TransformError, TransformSpec

from tests.harness.file_jobs import Job

pytestmark = pytest.mark.spark


def test_a_transform_dropping_the_delete_marker_is_refused_naming_the_transform(
    spark, tmp_path, store
):
    spec = TransformSpec("tests.harness.user_transforms", "drops_op")
    job = Job(spark, tmp_path, store, delete_marker=DeleteMarker("op", ("D",)), transform=spec)
    job.land([{"id": 1, "part": "a", "updated": 10, "value": "x", "op": "U"}])

    with pytest.raises(TransformError, match="drops_op: the result drops column 'op'"):
        job.run()
    assert not job.target.exists()
