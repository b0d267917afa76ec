"""Passwords out of JDBC URLs, without Spark: the operator's tools print URLs too.

``redact_url`` is the one place a URL is made safe to log or to raise in an error.
"""

from __future__ import annotations

import re

__all__ = ["redact_url"]


def redact_url(url: str) -> str:
    """``url`` with passwords removed: ``//user:pw@``, Oracle's ``user/pw@``, ``password=``
    (``sslpassword=`` too), ODBC-style ``PWD=``, SQL Server's braced ``password={a;b}``."""
    # Greedy to the last "@" before the path: a password may itself contain "@".
    redacted = re.sub(r"(//[^/@:?;]*:)[^/]*@", r"\1***@", url)
    # Oracle thin: jdbc:oracle:thin:user/password@host:1521/service
    redacted = re.sub(r"(?i)^(jdbc:oracle:[a-z0-9]+:)([^/@:]+)/[^@]*@", r"\1\2/***@", redacted)
    return re.sub(r"(?i)((?:password|pwd)=)(?:\{[^}]*\}?|[^&;)]*)", r"\1***", redacted)
