"""``watermarks rewind/reset`` and ``status`` on an Iceberg table in the Glue Data Catalog.

The local stack's Glue (moto) holds the table, LocalStack's S3 its metadata and data;
the CLI reaches it through pyiceberg, with no SparkSession (none is started here).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from glue_incremental import aws
from glue_incremental.watermarks import Watermarks, create_table
from glue_incremental_tools import cli, deploy, iceberg_catalog, status

from tests.harness.glue_iceberg import append_run, create_glue_table, rows_of

WATERMARKS = "glue-watermarks"
JOB = "orders"
TABLE = "sales.orders"


@pytest.fixture
def store(aws, monkeypatch):
    monkeypatch.delenv(cli.TABLE_ENV, raising=False)
    create_table(WATERMARKS)
    return Watermarks(WATERMARKS)


@pytest.fixture
def orders(store):
    """Two runs, each one snapshot in the Glue table and one commit in the watermarks table."""
    table = create_glue_table("gi-lake", "sales", "orders")
    for run, rows in (("jr_1", [(1, "a")]), ("jr_2", [(2, "b")])):
        append_run(table, run, JOB, rows)
        store.get_watermark(JOB)
        store.add_watermark(
            store.create_watermark_item(
                JOB, run, iceberg_table=f"glue_catalog.{TABLE}", last_id=rows[-1][0]
            )
        )
    return table


OUTPUTS = {
    "watermarks_table_name": WATERMARKS,
    "pipelines": {
        "orders": {"kind": "load", "job_name": "t-orders", "state_name": JOB, "upstreams": []}
    },
}


def test_rewind_rolls_the_glue_catalog_table_back_to_the_runs_snapshot(
    orders, store, monkeypatch, capsys
):
    monkeypatch.setattr(deploy, "terraform_outputs", lambda env, **_: OUTPUTS)
    first = next(s for s in iceberg_catalog.snapshots(orders) if s.run_id == "jr_1")

    argv = ["watermarks", "--env", "local", "rewind", "t-orders", "jr_1", "--why", "reprocess"]
    assert cli.main(argv) == 0

    assert rows_of(orders) == [(1, "a")]
    latest = store.history(JOB, limit=1).items[0]
    assert latest["kind"] == "rewind" and latest["iceberg_snapshot"] == str(first.snapshot_id)
    assert f"table glue_catalog.{TABLE} is back at snapshot {first.snapshot_id}" in (
        capsys.readouterr().out
    )


def test_reset_keeps_the_glue_catalog_table_and_names_its_snapshot(orders, store, capsys):
    current = orders.current_snapshot().snapshot_id

    assert cli.main(["watermarks", "reset", JOB, "--why", "full reload"]) == 0

    assert rows_of(orders) == [(1, "a"), (2, "b")]
    latest = store.history(JOB, limit=1).items[0]
    assert latest["kind"] == "reset" and latest["iceberg_snapshot"] == str(current)
    assert f"table glue_catalog.{TABLE} stays at snapshot {current}" in capsys.readouterr().out


def test_a_table_not_in_the_catalog_is_one_line_naming_it_and_no_state_changes(store, capsys):
    store.get_watermark(JOB)
    store.add_watermark(
        store.create_watermark_item(JOB, "jr_1", iceberg_table="glue_catalog.sales.gone")
    )

    for command in (["rewind", JOB, "jr_1"], ["reset", JOB]):
        code = cli.main(["watermarks", *command, "--why", "x"])
        _, err = capsys.readouterr()

        assert code == 2
        assert err.startswith("error: Iceberg table sales.gone is not in the Glue Data Catalog")
        assert err.count("\n") == 1 and "Traceback" not in err
    assert store.history(JOB, limit=1).items[0]["kind"] != "reset"


def test_rewind_to_a_run_without_a_snapshot_is_one_line(orders, store, capsys):
    store.get_watermark(JOB)
    store.add_watermark(
        store.create_watermark_item(JOB, "jr_3", iceberg_table=f"glue_catalog.{TABLE}")
    )

    code = cli.main(["watermarks", "rewind", JOB, "jr_3", "--why", "x"])

    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith(
        f"error: Iceberg table glue_catalog.{TABLE} has no snapshot of run 'jr_3' and its state "
        "names none"
    )
    assert err.count("\n") == 1
    assert rows_of(orders) == [(1, "a"), (2, "b")]


def test_status_shows_the_run_that_wrote_the_tables_current_snapshot(orders):
    assert cli.main(["watermarks", "rewind", JOB, "jr_1", "--why", "reprocess"]) == 0
    first = orders.refresh().current_snapshot().snapshot_id

    (row,) = status.environment_status("local", outputs=OUTPUTS)

    assert row.output == f"glue_catalog.{TABLE}: run jr_1 (snapshot {first})"
    assert f"run jr_1 (snapshot {first})" in status.render_table([row])


def test_outside_the_local_environment_only_the_glue_catalog_is_asked(aws, tmp_path, monkeypatch):
    """A table only the local Hadoop warehouse has is found for local, never for dev/prod."""
    (tmp_path / "sales" / "local_only" / "metadata").mkdir(parents=True)
    (tmp_path / "sales" / "local_only" / "metadata" / "v1.metadata.json").write_text("{}")
    monkeypatch.setenv("GLUE_INCREMENTAL_ICEBERG_WAREHOUSE", tmp_path.as_uri())

    local = iceberg_catalog.open_target("glue_catalog.sales.local_only", local=True)

    assert isinstance(local, iceberg_catalog.LocalWarehouseTable)
    with pytest.raises(iceberg_catalog.TableNotFound, match=r"sales\.local_only"):
        iceberg_catalog.open_target("glue_catalog.sales.local_only", local=False)


def test_locally_the_table_is_read_in_the_warehouse_its_jobs_conf_names(orders, monkeypatch):
    """No variable names the warehouse: the job definition does, as the local runner hands
    it to the job (a Hadoop catalog's layout there: <database>/<table>/metadata/v<N>)."""
    monkeypatch.delenv("GLUE_INCREMENTAL_ICEBERG_WAREHOUSE", raising=False)
    source = orders.metadata_location.removeprefix("s3://")
    aws.client("s3").copy_object(
        Bucket="gi-lake",
        Key="warehouse/sales/ran_here/metadata/v3.metadata.json",
        CopySource=source,
    )
    aws.client("glue").create_job(
        Name="gi-local-ran-here",
        Role="arn:aws:iam::123456789012:role/glue",
        Command={"Name": "glueetl", "ScriptLocation": "s3://gi-lake/script.py"},
        DefaultArguments={"--conf": f"{iceberg_catalog.WAREHOUSE_CONF}=s3://gi-lake/warehouse/"},
    )
    name = "glue_catalog.sales.ran_here"

    found = iceberg_catalog.open_target(name, local=True, job="gi-local-ran-here")

    assert isinstance(found, iceberg_catalog.LocalWarehouseTable)
    assert found.warehouse == "s3://gi-lake/warehouse/"
    current = found.current()
    assert current is not None and current.run_id == "jr_2"
    assert found.snapshot_of_run("jr_1") is not None
    with pytest.raises(iceberg_catalog.TableNotFound, match=r"sales\.ran_here"):
        iceberg_catalog.open_target(name, local=False, job="gi-local-ran-here")


def test_a_rollback_of_a_table_that_moved_since_it_was_read_is_refused(orders):
    stale = iceberg_catalog.load_table(iceberg_catalog.CatalogTable.parse(TABLE))
    first = iceberg_catalog.snapshot_of_run(stale, "jr_1")
    append_run(orders, "jr_3", JOB, [(3, "c")])

    with pytest.raises(iceberg_catalog.RollbackRefused, match="the table is unchanged"):
        iceberg_catalog.rollback_to(stale, first)

    assert rows_of(orders) == [(1, "a"), (2, "b"), (3, "c")]


def test_an_operator_machine_without_spark_rewinds_the_table(orders, store):
    """The tools extra has no pyspark: the rewind must not import it (nor start a JVM)."""
    without_spark = textwrap.dedent(
        """
        import sys
        class NoSpark:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("pyspark", "py4j"):
                    raise ImportError(f"No module named {name!r}", name=name)
        sys.meta_path.insert(0, NoSpark())
        from glue_incremental_tools.cli import main
        sys.exit(main(sys.argv[1:]))
        """
    )
    lib = Path(__file__).resolve().parents[2] / "lib"

    done = subprocess.run(
        [sys.executable, "-c", without_spark, "watermarks", "rewind", JOB, "jr_1", "--why", "x"],
        env={**os.environ, "PYTHONPATH": str(lib)},
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert done.returncode == 0, done.stderr
    assert rows_of(orders) == [(1, "a")]
