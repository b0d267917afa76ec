"""A real PostgreSQL server in a temporary directory, on a free loopback port.

The server refuses to run as root, so when the tests run as root it is started
as the ``postgres`` system user (created by Debian's ``postgresql`` package).
"""

from __future__ import annotations

import glob
import os
import pwd
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from tests.harness.endpoint import free_port

JDBC_JAR_CANDIDATES = ("/usr/share/java/postgresql.jar", "/usr/share/java/postgresql-jdbc4.jar")


def jdbc_jar() -> str:
    for candidate in JDBC_JAR_CANDIDATES:
        if os.path.exists(candidate):
            return candidate
    raise RuntimeError("PostgreSQL JDBC driver missing: run `make setup` (libpostgresql-jdbc-java)")


def _pg_bin(name: str) -> str:
    found = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    if found:
        return found[-1]
    path = shutil.which(name)
    if not path:
        raise RuntimeError(f"PostgreSQL binary {name!r} missing: run `make setup` (postgresql)")
    return path


@dataclass(frozen=True)
class Postgres:
    host: str
    port: int
    user: str
    password: str
    database: str
    log_path: str = ""

    @property
    def jdbc_url(self) -> str:
        return f"jdbc:postgresql://{self.host}:{self.port}/{self.database}"

    def credentials_secret(self, name: str) -> str:
        """A Secrets Manager secret (on the local stack) holding this server's user and
        password, as a JDBC source's ``--source_secret_id`` reads them; returns its ARN."""
        import json

        from glue_incremental import aws as aws_clients

        return aws_clients.client("secretsmanager").create_secret(
            Name=name,
            SecretString=json.dumps({"username": self.user, "password": self.password}),
        )["ARN"]

    def connect(self):
        import pg8000.dbapi

        return pg8000.dbapi.connect(
            host=self.host,
            port=self.port,
            user=self.user,
            password=self.password,
            database=self.database,
        )

    def execute(
        self,
        sql: str,
        params: tuple | list | None = None,
        *,
        many: bool = False,
        autocommit: bool = False,
    ) -> list:
        """Run one statement; ``autocommit`` for statements that refuse a transaction block."""
        connection = self.connect()
        try:
            connection.autocommit = autocommit
            cursor = connection.cursor()
            if many:
                cursor.executemany(sql, params or [])
            else:
                cursor.execute(sql, params or ())
            rows = cursor.fetchall() if cursor.description else []
            connection.commit()
            return rows
        finally:
            connection.close()


@contextmanager
def running_postgres() -> Iterator[Postgres]:
    run_as_root = os.geteuid() == 0
    workdir = tempfile.mkdtemp(prefix="gi-pg-")
    datadir = os.path.join(workdir, "data")
    port = free_port()
    password = "glue-test"
    pwfile = os.path.join(workdir, "pw")
    with open(pwfile, "w") as handle:
        handle.write(password)

    def as_owner(args: list[str]) -> list[str]:
        return ["runuser", "-u", "postgres", "--", *args] if run_as_root else args

    if run_as_root:
        postgres_user = pwd.getpwnam("postgres")
        for path in (workdir, datadir, pwfile):
            if not os.path.exists(path):
                os.makedirs(path)
            os.chown(path, postgres_user.pw_uid, postgres_user.pw_gid)
    subprocess.run(
        as_owner(
            [
                _pg_bin("initdb"),
                "-D",
                datadir,
                "-U",
                "glue",
                "--pwfile",
                pwfile,
                "-A",
                "scram-sha-256",
            ]
        ),
        check=True,
        capture_output=True,
    )
    log = os.path.join(workdir, "server.log")
    subprocess.run(
        as_owner(
            [
                _pg_bin("pg_ctl"),
                "-D",
                datadir,
                "-l",
                log,
                "-w",
                "-t",
                "60",
                "start",
                "-o",
                f"-p {port} -h 127.0.0.1 -k {workdir} -c log_statement=all -c fsync=off",
            ]
        ),
        check=True,
        capture_output=True,
    )
    server = Postgres("127.0.0.1", port, "glue", password, "postgres")
    deadline = time.monotonic() + 30
    while True:
        try:
            server.execute("select 1")
            break
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    server.execute("create database source", autocommit=True)
    try:
        yield Postgres("127.0.0.1", port, "glue", password, "source", log)
    finally:
        subprocess.run(
            as_owner([_pg_bin("pg_ctl"), "-D", datadir, "-m", "immediate", "stop"]),
            capture_output=True,
        )
        shutil.rmtree(workdir, ignore_errors=True)


def statements_since(server: Postgres, offset: int) -> tuple[list[str], int]:
    """Statements PostgreSQL logged after byte ``offset`` of its log, and the new offset."""
    with open(server.log_path, errors="replace") as handle:
        handle.seek(offset)
        text = handle.read()
        end = handle.tell()
    # Simple queries log "statement: ...", JDBC's extended protocol "execute <name>: ...".
    found = re.findall(r"(?:statement|execute [^:]*): (.*)", text)
    return found, end
