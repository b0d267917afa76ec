"""Passwords never appear in what the library prints."""

from __future__ import annotations

import pytest
from glue_incremental.sources.credentials import Credentials
from glue_incremental.sources.jdbc import redact_url


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("jdbc:oracle:thin:scott/tiger@db:1521/orcl", "jdbc:oracle:thin:scott/***@db:1521/orcl"),
        ("jdbc:oracle:oci:scott/tiger@//db:1521/orcl", "jdbc:oracle:oci:scott/***@//db:1521/orcl"),
        ("jdbc:postgresql://app:tiger@db:5432/shop", "jdbc:postgresql://app:***@db:5432/shop"),
        (
            "jdbc:postgresql://db/shop?user=a&password=tiger",
            "jdbc:postgresql://db/shop?user=a&password=***",
        ),
        (
            "jdbc:sqlserver://db;user=a;password=tiger;db=x",
            "jdbc:sqlserver://db;user=a;password=***;db=x",
        ),
        (
            "jdbc:sqlserver://db;user=a;password={ti;ger};db=x",
            "jdbc:sqlserver://db;user=a;password=***;db=x",
        ),
        (
            "jdbc:redshift://db:5439/shop;UID=a;PWD=tiger",
            "jdbc:redshift://db:5439/shop;UID=a;PWD=***",
        ),
        ("jdbc:mysql://app:ti@ger@db/shop", "jdbc:mysql://app:***@db/shop"),
    ],
)
def test_redact_url_hides_the_password_in_every_url_style(url, shown):
    assert redact_url(url) == shown
    assert "tiger" not in redact_url(url)


def test_credentials_never_print_their_password():
    assert "tiger" not in repr(Credentials("scott", "tiger"))
