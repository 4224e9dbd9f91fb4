"""Faults on the real stack (issue 17): an agent killed with SIGKILL while its upload is in
flight, PostgreSQL down while agents upload, Redis restarted, a Celery worker killed, the
spool's disk full while the server does not answer, the server gone for an hour of an
agent's time (a test build whose waits pass 60 times faster).
Each proves that no result the agent measured is lost, none is stored twice, and that
everything recovers by itself: nobody restarts an agent's upload or replays anything.

Results are followed by id: the ids in an agent's spool when the fault strikes must all end
up stored, once each, and new results keep arriving afterwards.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import cast

import pytest
import requests

from .conftest import AGENT_BIN, ARTIFACTS, ROOT, SYSTEST_NET, VENV_BIN, Agent, Stack, free_port, log_path, wait_for
from .lab_agents import apply_meshes

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


def alive(pid: int) -> bool:
    """Running, not a zombie waiting for its new parent to reap it."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


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
        # (Moved, not renamed: the tmpfs is another file system.)
        for left in (spool / "pending").glob("*.json"):
            (aside / "pending").mkdir(parents=True, exist_ok=True)
            shutil.move(left, aside / "pending" / left.name)
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
        killed = stack.processes[f"agent-{agent.name}"]
        tools = children(killed.pid)
        assert tools, "the agent runs its iperf3 server as a child"
        killed.kill()
        killed.wait(timeout=10)
        # Its tools die with it (the kernel's parent-death signal): no orphaned iperf3 server
        # keeps the agent's port.
        wait_for("the killed agent's tools to die with it", lambda: not any(alive(pid) for pid in tools), 10, 0.2)
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
    log = log_path("worker")
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
    log = log_path(f"agent-{agent.name}")
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


# The outage test's agent: a test build (`make agents-testclock`) whose waits pass
# CLOCK_RATE times faster than real time. Its results keep wall-clock timestamps.
CLOCKED_AGENT_BIN = ROOT / "agents" / "bin" / "fathom-agent-testclock"
CLOCK_RATE = 60
OUTAGE_AGENT_S = 3600
# The uploader's back-off (agents/internal/upload New): 2 s doubling to 5 min, +-20%.
MIN_BACKOFF_S, MAX_BACKOFF_S, JITTER = 2.0, 300.0, 0.2
# Retries a loaded machine may delay past their announced wait (see the outage test).
STALLED_GAPS = 3
UPLOAD_INTERVAL_S = 10  # between rounds while the server answers (meshes/services/plans.py)
PLAN_POLL_S = 30  # the agent's default, in its own time
UPLOAD_FAILED = "upload failed; results stay spooled"


@dataclass
class ClockedAgent:
    agent: Agent
    web_argv: list[str]  # its own web process, so only this agent loses the server
    port: int
    log: Path
    log_offset: int  # where this run's lines start in the appended log

    def log_lines(self) -> list[str]:
        return self.log.read_bytes()[self.log_offset :].decode(errors="replace").splitlines()


def refusing(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) != 0


def serving(stack: Stack, port: int) -> bool:
    stack.assert_running()
    return requests.get(f"http://127.0.0.1:{port}/api/v1/auth/csrf/", timeout=2).ok


@pytest.fixture
def clocked_agent(stack: Stack, tmp_path: Path) -> Iterator[ClockedAgent]:
    """sys-clocked on NET.4, a test build at CLOCK_RATE talking to a web process of its
    own, in a ping-only mesh with sys-a (the default mesh paused): a ping every 60 s of its
    time, one a second. Revoked afterwards, so no later test meets it."""
    subprocess.run(["make", "-s", "agents-testclock"], cwd=ROOT, check=True, timeout=600)
    port = free_port()
    web_argv = [str(VENV_BIN / "gunicorn"), "--chdir", "backend", "--bind", f"127.0.0.1:{port}", "--workers", "2",
                "fathom.wsgi"]  # fmt: skip
    stack.start("web-clocked", web_argv)
    agent = Agent("sys-clocked", f"{SYSTEST_NET}.4", 0, tmp_path / "agent-clocked")
    log = log_path(f"agent-{agent.name}")
    try:
        wait_for("the clocked agent's web server", lambda: serving(stack, port), 30, 0.3)
        token = stack.manage("create_enrollment_token", "--note", f"system test {agent.name}").strip()
        subprocess.run(
            [str(CLOCKED_AGENT_BIN), "enroll", "--server", f"http://127.0.0.1:{port}", "--token", token,
             "--name", agent.name, "--address", agent.address, "--state-dir", str(agent.state_dir)],
            check=True, capture_output=True, text=True,
        )  # fmt: skip
        agent.agent_id = json.loads((agent.state_dir / "credential.json").read_text())["agent_id"]
        ping = {"name": "ping", "test_type": "ping", "interval_s": 60, "spec": {"count": 3, "interval_s": 0.2}}
        members = [{"agent": agent.name}, {"agent": stack.agents[0].name}]
        apply_meshes(
            stack,
            tmp_path,
            [{"name": "default", "enabled": False}, {"name": "clocked", "kind": "mesh", "members": members,
             "tests": [ping]}],
        )  # fmt: skip
        offset = log.stat().st_size if log.exists() else 0
        env = {**stack.env, "FATHOM_AGENT_TEST_CLOCK_RATE": str(CLOCK_RATE),
               "FATHOM_PLAN_POLL_INTERVAL_S": str(PLAN_POLL_S)}  # fmt: skip
        with open(log, "ab") as out:
            stack.processes[f"agent-{agent.name}"] = subprocess.Popen(
                [str(CLOCKED_AGENT_BIN), "run", "--state-dir", str(agent.state_dir), "--iperf3-enabled", "false",
                 "--echo-bind", agent.address, "--twamp-bind", agent.address],
                cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
            )  # fmt: skip
        yield ClockedAgent(agent, web_argv, port, log, offset)
    finally:
        for name in (f"agent-{agent.name}", "web-clocked"):
            process = stack.processes.pop(name, None)
            if process is not None:
                process.terminate()
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    process.kill()
        apply_meshes(stack, tmp_path, [{"name": "clocked", "enabled": False}, {"name": "default", "enabled": True}])
        if agent.agent_id:
            stack.session().post(f"{stack.url}/api/v1/agents/{agent.agent_id}/revoke/", timeout=10).raise_for_status()


def crash(process: subprocess.Popen[bytes]) -> None:
    """gunicorn and its workers killed with SIGKILL: the port refuses connections at once."""
    for pid in [process.pid, *children(process.pid)]:
        os.kill(pid, signal.SIGKILL)
    process.wait(timeout=10)


@dataclass
class Attempt:
    at: datetime  # wall clock, as the agent logged it
    retry_in_s: float  # the back-off it announced, in its own time


def go_duration_s(text: str) -> float:
    """A Go duration as the agent logs it rounded to seconds: 2s, 1m4s, 5m0s."""
    match = re.fullmatch(r"(?:(\d+)h)?(?:(\d+)m)?(?:(\d+(?:\.\d+)?)s)?", text)
    assert match and text, f"not a duration: {text!r}"
    hours, minutes, seconds = (float(group or 0) for group in match.groups())
    return hours * 3600 + minutes * 60 + seconds


def logged_at(line: str) -> datetime:
    """The time of an agent's log line (slog's text format starts with time=...)."""
    return datetime.fromisoformat(line.removeprefix("time=").split(" ", 1)[0])


def failed_uploads(lines: list[str], since: datetime, until: datetime) -> list[Attempt]:
    return [
        Attempt(logged_at(line), go_duration_s(line.rsplit("retry_in=", 1)[1].split()[0]))
        for line in lines
        if f'msg="{UPLOAD_FAILED}"' in line and since <= logged_at(line) <= until
    ]


def backoff_attempts(span_s: float, jitter: float) -> int:
    """Upload attempts in span_s of failures (the first at 0) when every back-off takes its
    jitter to one side: -JITTER gives the most attempts the back-off allows, +JITTER the fewest."""
    attempts, elapsed, wait = 1, 0.0, 0.0
    while True:
        wait = min(max(2 * wait, MIN_BACKOFF_S), MAX_BACKOFF_S) * (1 + jitter)
        if elapsed + wait > span_s:
            return attempts
        elapsed += wait
        attempts += 1


def test_an_hour_without_the_server_is_backed_off_and_loses_nothing(stack: Stack, clocked_agent: ClockedAgent) -> None:
    """The server gone (its port refusing) for an hour of the agent's time, a minute of real
    time: the agent spools what it measures meanwhile, retries its upload as its back-off says
    (2 s doubling to 5 min, not at every new result), and when the server is back, without a
    restart, stores every spooled result once and goes on."""
    assert b"FATHOM_AGENT_TEST_CLOCK_RATE" not in AGENT_BIN.read_bytes(), "the production agent reads the test clock"
    clocked = clocked_agent
    agent = clocked.agent
    process = stack.processes[f"agent-{agent.name}"]
    wait_for("sys-clocked's first results stored", lambda: stored(stack, agent), 60, 0.5)
    assert any("test build" in line and f"rate={CLOCK_RATE}" in line for line in clocked.log_lines()), "no test clock"

    # The outage starts with the kill: an upload that fails before the port is seen refusing
    # is the back-off's first attempt (at 60x, 0.05 s of polling is 3 s of the agent's time).
    down_at = datetime.now(UTC)
    crash(stack.processes.pop("web-clocked"))
    wait_for("the server's port refusing", lambda: refusing(clocked.port), 5, 0.05)
    time.sleep(OUTAGE_AGENT_S / CLOCK_RATE)
    in_spool = spooled(agent)
    assert process.poll() is None, "the agent died without its server"
    stack.start("web-clocked", clocked.web_argv)
    wait_for("the clocked agent's web server back", lambda: serving(stack, clocked.port), 30, 0.1)
    up_at = datetime.now(UTC)
    wait_for("every result spooled in the outage stored once", lambda: all_stored_once(stack, agent, in_spool), 60, 0.2)
    recovered_s = (datetime.now(UTC) - up_at).total_seconds()
    assert not stored_twice(stack, agent)
    wait_for("new results after the outage", lambda: new_results_after(stack, agent, up_at), 30, 0.5)
    assert process.poll() is None and stack.processes[f"agent-{agent.name}"] is process, "the agent was restarted"

    lines = clocked.log_lines()
    attempts = failed_uploads(lines, down_at, up_at)
    assert attempts, "no upload failed while the server was gone"
    span_s = (up_at - attempts[0].at).total_seconds() * CLOCK_RATE
    waits = [a.retry_in_s for a in attempts]
    gaps = [(b.at - a.at).total_seconds() * CLOCK_RATE for a, b in itertools.pairwise(attempts)]
    plan_failures, facts_failures = (
        sum(message in line and down_at <= logged_at(line) <= up_at for line in lines)
        for message in ("plan fetch failed", "host facts not reported")
    )
    figures = {
        "outage_agent_s": round((up_at - down_at).total_seconds() * CLOCK_RATE),
        "spooled_in_outage": len(in_spool),
        "upload_attempts": len(attempts),
        "attempts_the_backoff_allows": [backoff_attempts(span_s, JITTER), backoff_attempts(span_s, -JITTER)],
        "attempts_without_backoff": round(span_s / UPLOAD_INTERVAL_S),
        "retry_in_s": waits,
        "gaps_agent_s": [round(gap, 1) for gap in gaps],
        "plan_fetch_failures": plan_failures,
        "host_facts_failures": facts_failures,
        "recovered_real_s": round(recovered_s, 1),
    }
    (ARTIFACTS / "outage-backoff.json").write_text(json.dumps(figures, indent=1))
    print(f"an hour without the server: {json.dumps(figures)}")

    # The back-off starts at 2 s and doubles (+-20%; logged in whole seconds) up to the 5 min cap.
    assert waits[0] <= MIN_BACKOFF_S * (1 + JITTER) + 0.5, figures
    for before, after in itertools.pairwise(waits):
        doubled = 2 * before * (1 - JITTER) - 2 <= after <= 2 * before * (1 + JITTER) + 2
        capped = MAX_BACKOFF_S * (1 - JITTER) - 1 <= after <= MAX_BACKOFF_S * (1 + JITTER) + 1
        assert doubled or capped, figures
    assert max(waits) >= MAX_BACKOFF_S * (1 - JITTER) - 1, f"the back-off never reached its cap: {figures}"
    # Each retry waits what it announced: a new result neither cuts the back-off short nor
    # starts it over. Never sooner (6 s of the agent's time is 0.1 s here). Later only when
    # the machine stalled the agent: a second of real stall is a minute of its time (a CI
    # run saw 3.8 and 17.5 real seconds, two of 18 gaps, with the disk and both cores busy).
    # A new result restarting the wait would lengthen every gap from its first kick on, so
    # at most STALLED_GAPS may run long, and the stalled time is left out of the count below.
    late = [(wait, gap) for wait, gap in zip(waits, gaps, strict=False) if gap > wait * 1.05 + 6]
    for wait, gap in zip(waits, gaps, strict=False):
        assert gap >= wait - 1.5, figures
    assert len(late) <= STALLED_GAPS, f"{len(late)} retries later than announced: {late}; {figures}"
    stalled_s = sum(gap - wait for wait, gap in late)
    most, fewest = backoff_attempts(span_s, -JITTER), backoff_attempts(span_s - stalled_s, JITTER)
    assert fewest - 1 <= len(attempts) <= most, figures
    # Plan polls go on at their interval: no faster than one per PLAN_POLL_S of the agent's time.
    assert plan_failures <= span_s / PLAN_POLL_S + 2, figures
    # Everything stored within one capped back-off of the server's return (6 s here), and
    # as long again as the longest stall the retries saw.
    stall_real_s = max((gap - wait for wait, gap in late), default=0.0) / CLOCK_RATE
    assert recovered_s <= MAX_BACKOFF_S * (1 + JITTER) / CLOCK_RATE + 5 + stall_real_s, figures
