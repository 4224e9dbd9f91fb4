"""Real agents inside the lab's namespaces, enrolled with a server on the lab's management
bridge, running a mesh the test applies: the rig every lab system test shares."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from lab.attempts import EMULATOR_LATE_SHARE
from lab.lab import LAB_BIN, MANAGEMENT_ADDRESS, Lab, Lateness, lab_up

from .conftest import AGENT_BIN, VENV_BIN, Stack, free_port, stop_process, wait_for


def apply_meshes(stack: Stack, tmp: Path, meshes: list[dict[str, Any]]) -> None:
    path = tmp / "meshes.json"
    path.write_text(json.dumps(meshes))
    stack.manage("apply_mesh", str(path))


def path_report(stack: Stack, ids: dict[str, str], sender: str, receiver: str, **params: Any) -> dict[str, Any]:
    """The analysis API's report of sender -> receiver."""
    reply = stack.session().get(
        f"{stack.url}/api/v1/analysis/path/",
        params={"source": ids[sender], "destination": ids[receiver], **params},
        timeout=30,
    )
    reply.raise_for_status()
    body: dict[str, Any] = reply.json()
    return body


def port_open(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex((MANAGEMENT_ADDRESS, port)) == 0


@contextmanager
def lab_with_agents(
    stack: Stack, tmp: Path, scenario: str | Path, mesh: dict[str, Any]
) -> Iterator[tuple[Lab, dict[str, str]]]:
    """The scenario up, one enrolled agent per mesh member, only `mesh` running (the default
    mesh is paused meanwhile). Yields the lab and agent ids by name; stops everything after."""
    names = [member["agent"] for member in mesh["members"]]
    apply_meshes(stack, tmp, [{"name": "default", "enabled": False}])
    try:
        with lab_up(scenario, management=True) as lab:
            port = free_port()
            server = f"http://{MANAGEMENT_ADDRESS}:{port}"
            if MANAGEMENT_ADDRESS not in stack.env["FATHOM_ALLOWED_HOSTS"]:
                stack.env["FATHOM_ALLOWED_HOSTS"] += f",{MANAGEMENT_ADDRESS}"
            stack.start(
                "web-lab",
                [str(VENV_BIN / "gunicorn"), "--chdir", "backend", "--bind", f"{MANAGEMENT_ADDRESS}:{port}",
                 "--workers", "2", "fathom.wsgi"],
            )  # fmt: skip
            started = ["web-lab"]
            try:
                wait_for(
                    "the lab's web server", lambda: stack.processes["web-lab"].poll() is None and port_open(port), 30
                )
                ids: dict[str, str] = {}
                for name in names:
                    state = tmp / name
                    token = stack.manage("create_enrollment_token", "--note", f"lab {name}").strip()
                    # A host with an IPv6 link registers its IPv6 address too: a dual-stack agent.
                    addresses = [lab.addresses[name], *([lab.addresses6[name]] if name in lab.addresses6 else [])]
                    lab.exec(
                        name, str(AGENT_BIN), "enroll", "--server", server, "--token", token, "--name", name,
                        *(word for address in addresses for word in ("--address", address)),
                        "--state-dir", str(state), "--allow-insecure-http",
                    )  # fmt: skip
                    ids[name] = json.loads((state / "credential.json").read_text())["agent_id"]
                apply_meshes(stack, tmp, [mesh])
                for name in names:
                    # A dual-stack host's servers listen on every address of its namespace (its
                    # own two and the management bridge's), an IPv4-only host's on its address.
                    binds = (
                        []
                        if name in lab.addresses6
                        else ["--iperf3-bind", lab.addresses[name], "--twamp-bind", lab.addresses[name]]
                    )
                    stack.start(
                        f"agent-{name}",
                        [str(LAB_BIN), "exec", "--state-dir", str(lab.state_dir), name, "--", str(AGENT_BIN), "run",
                         "--state-dir", str(tmp / name), *binds,
                         # The lab's namespaces share one kernel clock exactly.
                         "--twamp-clock-shared", "true"],
                    )  # fmt: skip
                    started.append(f"agent-{name}")
                yield lab, ids
            finally:
                for key in started:
                    stop_process(stack.processes.pop(key))
                apply_meshes(stack, tmp, [{"name": mesh["name"], "enabled": False}])
    finally:
        apply_meshes(stack, tmp, [{"name": "default", "enabled": True}])


def judged_wait(
    what: str,
    check: Callable[[], Any],
    timeout_s: float,
    lateness: Callable[[], Lateness],
    runs: Callable[[], list[tuple[Any, ...]]],
) -> None:
    """wait_for, except that a wait that timed out while the emulator left packets late is not
    judged (skipped, with the path's runs, `runs()` rows with the rate second, and the
    lateness); on time, it fails with them."""
    try:
        wait_for(what, check, timeout_s, interval_s=2)
    except AssertionError as missed:
        late = lateness()
        rates = ", ".join(f"{rate / 1e6:.0f}" for _, rate, *_ in runs())
        evidence = f"{missed}; the path's runs (Mbit/s): {rates}; {late.describe()}"
        if late.share_later_than(1000) >= EMULATOR_LATE_SHARE:
            pytest.skip(f"not judged: the emulator, not the path, missed the schedule; {evidence}")
        raise AssertionError(evidence) from missed
