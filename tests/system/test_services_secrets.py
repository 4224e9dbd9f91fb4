"""deploy/services.sh keeps the database password out of other users' reach while it starts
a cluster: the initdb password file is readable by initdb's user alone, and psql gets the
password in its environment, never as an argument (every process list shows arguments).

What initdb and psql were handed can only be seen from inside them, so FATHOM_PG_BIN and PATH
point at stand-ins that record it (and start nothing); Redis is the real one.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import ROOT, free_port

INITDB = """#!/bin/sh
for arg in "$@"; do case $arg in --pwfile=*) pwfile=${arg#--pwfile=} ;; esac; done
{ stat -c '%a %U' "$pwfile"; cat "$pwfile" >/dev/null && echo readable; } >"$RECORD/initdb"
while [ $# -gt 0 ]; do [ "$1" = -D ] && mkdir -p "$2" && echo 15 >"$2/PG_VERSION"; shift; done
"""
PG_CTL = """#!/bin/sh
for arg in "$@"; do
  case $arg in start) touch "$PGDATA_DIR/postmaster.pid" ;; stop) rm -f "$PGDATA_DIR/postmaster.pid" ;; esac
done
exit 0
"""
PSQL = """#!/bin/sh
echo "argv: $* | PGPASSWORD: ${PGPASSWORD:+set}" >>"$RECORD/psql"
echo 1
"""


@pytest.fixture
def stand_ins() -> Iterator[tuple[Path, dict[str, str]]]:
    # Readable by the postgres user, as whom services.sh runs initdb when it runs as root.
    work = Path(tempfile.mkdtemp(prefix="fathom-services-"))
    work.chmod(0o755)
    bin_dir, record = work / "bin", work / "record"
    bin_dir.mkdir(mode=0o755)
    record.mkdir()
    record.chmod(0o777)
    for name, text in {"initdb": INITDB, "pg_ctl": PG_CTL, "psql": PSQL}.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    var = work / "var"
    env = {
        **os.environ,
        "FATHOM_VAR": str(var),
        "FATHOM_PG_BIN": str(bin_dir),
        "FATHOM_PG_PORT": str(free_port()),
        "FATHOM_REDIS_PORT": str(free_port()),
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "RECORD": str(record),
        "PGDATA_DIR": str(var / "pg" / "data"),
    }
    try:
        yield record, env
    finally:
        subprocess.run(["bash", str(ROOT / "deploy" / "services.sh"), "stop"], env=env, capture_output=True, timeout=60)
        shutil.rmtree(work, ignore_errors=True)


def test_the_database_password_reaches_initdb_and_psql_privately(stand_ins: tuple[Path, dict[str, str]]) -> None:
    record, env = stand_ins
    started = subprocess.run(
        ["bash", str(ROOT / "deploy" / "services.sh"), "start"], env=env, capture_output=True, text=True, timeout=120
    )
    assert started.returncode == 0, started.stderr
    password = (Path(env["FATHOM_VAR"]) / "secrets" / "db_password").read_text().strip()
    owner = "postgres" if os.geteuid() == 0 else subprocess.run(["id", "-un"], capture_output=True, text=True).stdout
    assert (record / "initdb").read_text().split() == ["600", owner.strip(), "readable"]
    calls = (record / "psql").read_text().splitlines()
    assert calls, "services.sh ran no psql"
    assert all(password not in call and call.endswith("PGPASSWORD: set") for call in calls), calls
