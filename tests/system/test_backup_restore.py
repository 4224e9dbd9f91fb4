"""The restore drill (issue 33): `deploy/backup.sh` (make backup / make restore) takes a
backup of a stack with data, the database is destroyed, the backup restored, and the same
rows, the same path history and the same agents are back; the agents, which kept running on
their old credentials, upload again.

The stack's agents are paused (SIGSTOP) from the count before the backup to the count after
the restore, so nothing lands in between; web and workers keep running and lose their
connections when the database is dropped, as a real restore does to them.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import requests

from .conftest import ROOT, Stack, wait_for

# Rows whose count must survive exactly: what agents sent, who they are, what people set up.
TABLES = (
    "inventory_agent", "inventory_enrollmenttoken", "inventory_hostfactssnapshot", "measurements_run",
    "measurements_pingsample", "meshes_mesh", "meshes_meshtest", "auth_user", "audit_auditentry",
)  # fmt: skip


def counts(stack: Stack) -> dict[str, int]:
    # TABLES is this module's constant: no input reaches the statement.
    return {table: int(stack.query(f"SELECT count(*) FROM {table}")[0][0]) for table in TABLES}  # noqa: S608


def settled(stack: Stack) -> dict[str, int] | None:
    """The counts, when they have not moved over two seconds."""
    first = counts(stack)
    time.sleep(2)
    return first if counts(stack) == first else None


def history(stack: Stack, http: requests.Session, start: datetime, end: datetime) -> Any:
    a, b = stack.agents
    reply = http.get(
        f"{stack.url}/api/v1/paths/history/",
        params={"source": a.agent_id, "destination": b.agent_id, "from": start.isoformat(), "to": end.isoformat()},
        timeout=30,
    )
    reply.raise_for_status()
    return reply.json()


def pings_from(stack: Stack) -> int:
    sql = "SELECT count(*) FROM measurements_run WHERE source_id = %s AND test_type = 'ping'"
    return int(stack.query(sql, stack.agents[0].agent_id)[0][0])


@contextmanager
def agents_paused(stack: Stack) -> Iterator[None]:
    pids = [stack.processes[f"agent-{agent.name}"].pid for agent in stack.agents]
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGCONT)


def backup_script(stack: Stack, *args: str) -> None:
    done = subprocess.run(
        ["bash", str(ROOT / "deploy" / "backup.sh"), *args],
        env={**stack.env, "FATHOM_SECRETS_DIR": str(Path(args[1]).parent / "secrets")},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_a_destroyed_database_comes_back_from_its_backup(stack: Stack, tmp_path: Path) -> None:
    wait_for("pings from the stack's agents", lambda: pings_from(stack) >= 3, 120)
    http = stack.session()
    with agents_paused(stack):
        # An upload in flight when the agents stopped lands within a second or two.
        before = wait_for("the last uploads to land", lambda: settled(stack), 30, interval_s=0.5)
        end = datetime.now(UTC)
        shown = history(stack, http, end - timedelta(minutes=30), end)
        secrets = tmp_path / "secrets"  # FATHOM_SECRETS_DIR: the stack's own secrets stay untouched
        secrets.mkdir()
        (secrets / "db_password").write_text("kept")
        backup_script(stack, "backup", str(tmp_path / "backup"))
        (secrets / "db_password").unlink()
        destroyed = subprocess.run(
            [
                "/usr/lib/postgresql/15/bin/psql", "-X", "-q", "-d",
                stack.database_url.rsplit("/", 1)[0] + "/postgres",
                "-c", f"DROP DATABASE {stack.database_url.rsplit('/', 1)[1]} WITH (FORCE)",
            ],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert destroyed.returncode == 0, destroyed.stderr
        backup_script(stack, "restore", str(tmp_path / "backup"))
        assert counts(stack) == before
        # The browser's session was a row of the database too: it still signs this request in.
        assert history(stack, http, end - timedelta(minutes=30), end) == shown
        assert (secrets / "db_password").read_text() == "kept", "the secrets came back"
    delivered = pings_from(stack)
    wait_for("uploads on the agents' old credentials", lambda: pings_from(stack) > delivered, 60)
    stack.assert_running()
