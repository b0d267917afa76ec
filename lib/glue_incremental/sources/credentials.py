"""JDBC credentials from Secrets Manager or a Glue connection, never from job arguments.

A password passed as ``--source_password`` is visible in GetJob/GetJobRun,
CloudTrail, Terraform state and plan artifacts, so the job refuses it. Instead:

- ``--source_secret_id``: a Secrets Manager secret whose ``SecretString`` is JSON
  with ``username`` and ``password`` (the shape RDS and the console create);
- ``--connection_name``: a Glue connection, read through the Glue API; its
  ``USERNAME``/``PASSWORD`` properties, or the secret its ``SECRET_ID`` names.

``Credentials`` never prints its password (``repr`` hides it).
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass, field

from glue_incremental import aws
from glue_incremental.errors import GlueIncrementalError


class CredentialsError(GlueIncrementalError, ValueError):
    """The secret or connection cannot give credentials; ``source`` names it (never the value)."""

    def __init__(self, source: str, message: str) -> None:
        self.source = source
        super().__init__(message)


@dataclass(frozen=True)
class Credentials:
    user: str | None
    password: str | None = field(default=None, repr=False)


# botocore logs whole response bodies at DEBUG: while a secret is fetched they stay quiet.
_WIRE_LOGGERS = ("botocore", "urllib3", "boto3")
# py4j logs every JVM command at DEBUG, a JDBC ``password`` option's value included.
JVM_LOGGERS = ("py4j", "py4j.clientserver", "py4j.java_gateway")


@contextlib.contextmanager
def quiet_logs(names: tuple[str, ...] = _WIRE_LOGGERS) -> Iterator[None]:
    """Raise ``names`` to INFO (never lower them) while a secret passes through them."""
    loggers = [logging.getLogger(name) for name in names]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        if logger.getEffectiveLevel() < logging.INFO:
            logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


def from_secret(secret_id: str) -> Credentials:
    """``username``/``password`` from a Secrets Manager secret's JSON ``SecretString``."""
    try:
        with quiet_logs():
            response = aws.client("secretsmanager").get_secret_value(SecretId=secret_id)
    except Exception as error:
        raise CredentialsError(
            secret_id, f"--source_secret_id {secret_id!r} could not be read: {_reason(error)}"
        ) from None
    try:
        values = json.loads(response.get("SecretString") or "")
    except ValueError:
        values = None
    if not isinstance(values, dict) or "password" not in values:
        raise CredentialsError(
            secret_id,
            f"--source_secret_id {secret_id!r} is not JSON with 'username' and 'password'",
        )
    return Credentials(values.get("username"), str(values["password"]))


def from_connection(name: str) -> Credentials:
    """Credentials of a Glue connection: its SECRET_ID if it has one, else USERNAME/PASSWORD."""
    try:
        with quiet_logs():
            connection = aws.client("glue").get_connection(Name=name, HidePassword=False)[
                "Connection"
            ]
    except Exception as error:
        raise CredentialsError(
            name, f"--connection_name {name!r} could not be read: {_reason(error)}"
        ) from None
    properties = connection.get("ConnectionProperties") or {}
    secret_id = properties.get("SECRET_ID")
    if secret_id:
        return from_secret(secret_id)
    if "PASSWORD" not in properties:
        raise CredentialsError(
            name, f"--connection_name {name!r} has neither SECRET_ID nor USERNAME/PASSWORD"
        )
    return Credentials(properties.get("USERNAME"), properties["PASSWORD"])


def resolve(
    *,
    secret_id: str | None,
    connection_name: str | None,
    user: str | None = None,
    password: str | None = None,
) -> Credentials:
    """The credentials to use: the secret, else the connection, else what the caller gave."""
    if secret_id and connection_name:
        raise CredentialsError(secret_id, "give --source_secret_id or --connection_name, not both")
    if secret_id:
        found = from_secret(secret_id)
    elif connection_name:
        found = from_connection(connection_name)
    else:
        return Credentials(user, password)
    return Credentials(found.user or user, found.password)


def _reason(error: Exception) -> str:
    response = getattr(error, "response", None)
    if isinstance(response, dict):
        code = response.get("Error", {}).get("Code")
        if code:
            return str(code)
    return type(error).__name__
