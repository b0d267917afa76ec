"""The shipped JDBC custom script, ``glue_scripts/label_payments.py``, run as Terraform's
custom kind calls it (``--<name>_url``, ``--<name>_table``, ``--source_secret_id``) on
PostgreSQL: the first run labels every payment, the next merges only what changed since
its cursor by ``payment_id``, with the lookup table read whole each time."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.harness.label_payments import PG_T0, shop_world

pytestmark = [pytest.mark.spark, pytest.mark.postgres]


@pytest.fixture
def shop(spark, store, postgres, tmp_path):  # after store: its reset clears the secrets
    yield from shop_world(spark, postgres, tmp_path)


def test_label_payments_labels_every_payment_then_merges_only_the_changed_ones(store, shop):
    shop.pay((10, 1, 0), (11, 2, 1))
    first = shop.run("lp_1")
    shop.pay((10, 2, 2), (12, 3, 3))
    second = shop.run("lp_2")

    assert first["records_read"] == 2
    assert second["records_read"] == 3  # the two changed rows and the cursor's own row
    # a payment whose method is not in the lookup table keeps a null label
    assert shop.output() == [(10, "transfer"), (11, "transfer"), (12, None)]
    cursor = store.get_watermark(shop.job, "payments")["watermarks"]["cursor"]
    assert cursor == PG_T0 + timedelta(minutes=3)


@pytest.mark.spark
@pytest.mark.postgres
def test_label_payments_labels_a_payment_committed_later_with_the_cursors_own_timestamp(shop):
    shop.pay((10, 1, 5))
    shop.run("jr_1")
    shop.pay((11, 2, 5))  # the same updated_at as the cursor, committed after the first run

    shop.run("jr_2")

    assert shop.output() == shop.full_recompute() == [(10, "card"), (11, "transfer")]


@pytest.mark.spark
@pytest.mark.postgres
def test_label_payments_labels_a_payment_as_of_its_change_and_a_reset_relabels_every_one(
    shop, store
):
    # The lookup joins the payments that changed (the script's docstring): a relabelled
    # method reaches a payment when the payment changes, and every payment after a reset.
    shop.pay((10, 1, 0), (11, 2, 1))
    shop.run("jr_1")
    shop.relabel(1, "credit card")
    shop.pay((12, 1, 2))

    shop.run("jr_2")
    assert shop.output() == [(10, "card"), (11, "transfer"), (12, "credit card")]

    store.reset(shop.job, who="test")
    shop.run("jr_3")
    assert shop.output() == shop.full_recompute()
