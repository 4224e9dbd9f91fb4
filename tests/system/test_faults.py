"""Faults on the real stack (issue 17): an agent killed with SIGKILL while its upload is in
flight, PostgreSQL down while agents upload, Redis restarted, a Celery worker killed, the
spool's disk full while the server does not answer.
Each proves that no result the agent measured is lost, none is stored twice, and that
everything recovers by itself: nobody restarts an agent's upload or replays anything.

Results are followed by id: the ids in an agent's spool when the fault strikes must all end
up stored, once each, and new results keep arriving afterwards.
"""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import cast

import pytest
import requests

from .conftest import ARTIFACTS, ROOT, Agent, Stack, wait_for

RECOVERY_TIMEOUT_S = 180


def spooled(agent: Agent) -> set[str]:
    pending = agent.state_dir / "spool" / "pending"
    return {path.stem for path in pending.glob("*.json")} if pending.exists() else set()


def stored(stack: Stack, agent: Agent) -> set[str]:
    rows = stack.query("SELECT id::text FROM measurements_run WHERE source_id = %s", agent.agent_id)
    return {row[0] for row in rows}


def stored_twice(stack: Stack, agent: Agent) -> list[tuple[object, ...]]:
    """One probe run stored under two ids would be a duplicate the primary key cannot see."""
    return stack.query(
        "SELECT test_id, started_at, count(*) FROM measurements_run WHERE source_id = %s"
        " GROUP BY 1, 2 HAVING count(*) > 1",
        agent.agent_id,
    )


def children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(child) for child in (task / "children").read_text().split()]
    return found


@contextmanager
def web_frozen(stack: Stack) -> Iterator[None]:
    """gunicorn and its workers stopped (SIGSTOP): connections are accepted by the kernel and
    then hang, as with a server that stopped answering in the middle of a request."""
    master = stack.processes["web"].pid
    pids = [master, *children(master)]
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        for pid in pids:
            os.kill(pid, signal.SIGCONT)


@contextmanager
def spool_on_a_tiny_disk(stack: Stack, agent: Agent, size: str) -> Iterator[Path]:
    """The agent restarted with its spool on a tmpfs of `size` (a real ENOSPC, far below the
    spool's own byte cap); afterwards the agent runs on its usual disk again."""
    spool = agent.state_dir / "spool"
    process = stack.processes[f"agent-{agent.name}"]
    process.terminate()
    process.wait(timeout=15)
    aside = agent.state_dir / "spool-aside"
    spool.rename(aside)
    spool.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(spool)], check=True)
    try:
        stack.start_agent(agent)
        yield spool
    finally:
        process = stack.processes[f"agent-{agent.name}"]
        process.terminate()
        process.wait(timeout=15)
        # Whatever is still pending goes back with the rest, to be uploaded as usual.
        for left in (spool / "pending").glob("*.json"):
            (aside / "pending").mkdir(parents=True, exist_ok=True)
            left.rename(aside / "pending" / left.name)
        subprocess.run(["umount", str(spool)], check=True)
        spool.rmdir()
        aside.rename(spool)
        stack.start_agent(agent)


def disk_full(spool: Path) -> bool:
    usage = os.statvfs(spool)
    return usage.f_bavail * usage.f_frsize < 4096


def services(*args: str) -> None:
    subprocess.run(["bash", str(ROOT / "deploy" / "services.sh"), *args], check=True, capture_output=True, timeout=120)


def all_stored_once(stack: Stack, agent: Agent, ids: set[str]) -> bool:
    stack.assert_running()
    return ids <= stored(stack, agent) and not (ids & spooled(agent))


def new_results_after(stack: Stack, agent: Agent, moment: datetime) -> bool:
    rows = stack.query(
        "SELECT count(*) FROM measurements_run WHERE source_id = %s AND received_at > %s", agent.agent_id, moment
    )
    return bool(rows[0][0])


@pytest.fixture
def uploading(stack: Stack) -> Stack:
    """The stack with both agents' results arriving now: fresh ones, not only stored earlier
    (a lab module before may have paused the agents' mesh, and a plan poll brings it back)."""
    since = datetime.now(UTC)
    for agent in stack.agents:
        wait_for(f"fresh results of {agent.name}", functools.partial(new_results_after, stack, agent, since), 180)
    return stack


def test_an_agent_killed_with_its_upload_in_flight_loses_nothing_and_repeats_nothing(uploading: Stack) -> None:
    stack = uploading
    agent = stack.agents[0]
    with web_frozen(stack):
        # A new result kicks an upload at once: it connects and hangs unanswered.
        wait_for("a result spooled behind the frozen server", lambda: spooled(agent), 60, 0.5)
        time.sleep(4)  # the kicked upload has sent its batch into the frozen server
        in_spool = spooled(agent)
        stack.processes[f"agent-{agent.name}"].kill()
        stack.processes[f"agent-{agent.name}"].wait(timeout=10)
    # The server now answers the batch the dead agent sent: stored, but never acknowledged.
    restarted_at = datetime.now(UTC)
    stack.start_agent(agent)
    wait_for(
        "every result spooled at the kill stored once",
        lambda: all_stored_once(stack, agent, in_spool),
        RECOVERY_TIMEOUT_S,
    )
    assert not stored_twice(stack, agent)
    wait_for("new results from the restarted agent", lambda: new_results_after(stack, agent, restarted_at), 120)


def test_a_database_restart_while_agents_upload_loses_nothing(uploading: Stack) -> None:
    stack = uploading
    before = {agent.name: spooled(agent) | stored(stack, agent) for agent in stack.agents}
    # Down for 18 s: every agent measures (every 10 s) and tries to upload meanwhile.
    restart = subprocess.Popen(["bash", str(ROOT / "deploy" / "services.sh"), "restart-postgres", "18"])
    time.sleep(15)
    # What the agents measured while it was down is in their spools, not lost.
    during = {agent.name: spooled(agent) for agent in stack.agents}
    assert restart.wait(timeout=120) == 0
    restarted_at = datetime.now(UTC)
    for agent in stack.agents:
        assert during[agent.name] - before[agent.name], f"{agent.name} spooled nothing while the database was down"
        wait_for(
            f"{agent.name}'s results from the outage stored",
            functools.partial(all_stored_once, stack, agent, during[agent.name]),
            RECOVERY_TIMEOUT_S,
        )
        assert not stored_twice(stack, agent)
        wait_for(f"{agent.name} uploading again", functools.partial(new_results_after, stack, agent, restarted_at), 120)
    assert requests.get(f"{stack.url}/api/v1/auth/csrf/", timeout=10).ok


def analyses_done() -> int:
    """analyze_recent runs the worker logged as succeeded (the log is appended across restarts)."""
    log = ARTIFACTS / "worker.log"
    text = log.read_text(errors="replace") if log.exists() else ""
    return sum("analysis.tasks.analyze_recent" in line and "succeeded" in line for line in text.splitlines())


def test_a_redis_restart_and_a_killed_worker_recover_by_themselves(uploading: Stack) -> None:
    """Ingest does not need Redis; queued work does, and flows again after the restart. The
    worker is killed with SIGKILL meanwhile (tasks are acknowledged late, so one it held is
    not lost with it); its replacement runs the work queued through the restarted Redis."""
    stack = uploading
    agent = stack.agents[1]
    worker = stack.processes["worker"]
    worker.kill()
    worker.wait(timeout=10)
    services("restart-redis", "5")
    restarted_at = datetime.now(UTC)
    before = analyses_done()
    stack.manage("shell", "-c", "from analysis.tasks import analyze_recent; analyze_recent.delay()")
    stack.start("worker", list(cast("list[str]", worker.args)))
    stored_again = functools.partial(new_results_after, stack, agent, restarted_at)
    wait_for("results stored across the Redis restart", stored_again, 120)
    wait_for("the queued analysis run by the replacement worker", lambda: analyses_done() > before, 90, 2)
    stack.assert_running()


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")
def test_a_full_spool_disk_drops_only_what_did_not_fit_and_recovers(uploading: Stack) -> None:
    """The server frozen while the agent measures, its spool on a 24 KiB tmpfs: the disk
    fills (ENOSPC), the agent keeps running and drops only the results that did not fit,
    saying so; nothing half-written stays behind. When the server answers again, everything
    that was spooled is stored once, and results flow again."""
    stack = uploading
    agent = stack.agents[1]
    log = ARTIFACTS / f"agent-{agent.name}.log"
    moved_at = datetime.now(UTC)
    with spool_on_a_tiny_disk(stack, agent, "24k") as spool:
        wait_for(f"{agent.name} uploading from its tiny spool", lambda: new_results_after(stack, agent, moved_at), 120)
        with web_frozen(stack):
            wait_for("the spool's disk full", lambda: disk_full(spool), 180, 1)
            logged_before = log.read_text(errors="replace").count("no space left on device")
            # Measure on for a while with the disk full: each new result is refused by the disk.
            wait_for(
                "a result dropped for want of disk",
                lambda: log.read_text(errors="replace").count("no space left on device") > logged_before,
                60,
                1,
            )
            in_spool = spooled(agent)
            assert in_spool, "nothing was spooled before the disk filled"
            assert stack.processes[f"agent-{agent.name}"].poll() is None, "the agent died of a full disk"
            assert not [p.name for p in (spool / "pending").iterdir() if not p.name.endswith(".json")], (
                "a half-written file was left in the spool"
            )
        thawed_at = datetime.now(UTC)
        wait_for(
            "every result spooled on the full disk stored once",
            lambda: all_stored_once(stack, agent, in_spool),
            RECOVERY_TIMEOUT_S,
        )
        assert not stored_twice(stack, agent)
        wait_for("new results once the disk has room", lambda: new_results_after(stack, agent, thawed_at), 120)
