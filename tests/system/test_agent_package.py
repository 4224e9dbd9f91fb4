"""The fathom-agent package under real systemd (issue 33): a debootstrapped Debian 12 booted
with `systemd-nspawn --boot` installs the .deb with apt (its dependencies come from apt), is
given the server's URL and an enrolment token made through the API, and starts the unit: the
agent enrols and delivers ping results to a real stack, as the package's user with only
CAP_NET_RAW. Upgrading to a newer build restarts it with the same credential and the Agents
API shows the new version; removing the package stops it and keeps its state.

The container shares the host's network (no --private-network), so the agent reaches the
stack and its peers on loopback like the stack's own agents. Needs root, debootstrap and
systemd-container (deploy/install.sh installs both).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from .conftest import ARTIFACTS, ROOT, SYSTEST_NET, Stack, free_port, wait_for

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="systemd-nspawn needs root")

MIRROR = "http://deb.debian.org/debian"
# Building, unpacking and the container yield CPU and disk to everything else: the lab lane's
# user-space emulator runs beside this suite, and a starved one measures the machine.
IDLE = ("nice", "-n", "19", "ionice", "-c", "3")
# Cached between runs on one machine (a clean checkout builds it once, about a minute).
ROOTFS_CACHE = ROOT / "var" / "nspawn" / "bookworm"
BASE_PACKAGES = "systemd,systemd-sysv,dbus,ca-certificates"
OLD, NEW = "0.3.0+pkgtest.1", "0.3.0+pkgtest.2"
NAME = "pkg-agent"


def base_rootfs() -> Path:
    stamp = ROOTFS_CACHE / ".fathom-complete"
    if stamp.exists() and stamp.read_text() == BASE_PACKAGES:
        return ROOTFS_CACHE
    shutil.rmtree(ROOTFS_CACHE, ignore_errors=True)
    ROOTFS_CACHE.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [*IDLE, "debootstrap", "--variant=minbase", f"--include={BASE_PACKAGES}", "bookworm", str(ROOTFS_CACHE),
         MIRROR],
        check=True, capture_output=True, timeout=900,
    )  # fmt: skip
    stamp.write_text(BASE_PACKAGES)
    return ROOTFS_CACHE


def build_package(version: str, out: Path) -> Path:
    """The amd64 .deb of that version, built into `out` (its own directory: another lane
    builds packages at the same time)."""
    done = subprocess.run(
        [*IDLE, "bash", "deploy/packaging/build.sh"],
        cwd=ROOT, env={**os.environ, "PKG_VERSION": version, "PKG_ARCHES": "amd64", "PKG_OUT": str(out)},
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr + done.stdout
    return out / f"fathom-agent_{version}_amd64.deb"


@dataclass
class Machine:
    """A booted container: commands run in its namespaces through its init's PID."""

    root: Path
    process: subprocess.Popen[bytes]
    init_pid: int = 0

    def run(self, *command: str, timeout_s: float = 300, check: bool = True) -> str:
        done = subprocess.run(
            [*IDLE, "nsenter", "-t", str(self.init_pid), "-a", "--", *command],
            capture_output=True, text=True, timeout=timeout_s, check=False,
            env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "DEBIAN_FRONTEND": "noninteractive", "LC_ALL": "C"},
        )  # fmt: skip
        if check:
            assert done.returncode == 0, f"{command}: exit {done.returncode}\n{done.stderr}\n{done.stdout}"
        return done.stdout

    def unit(self, *properties: str) -> dict[str, str]:
        shown = self.run("systemctl", "show", "fathom-agent.service", *(f"--property={p}" for p in properties))
        return dict(line.split("=", 1) for line in shown.splitlines() if "=" in line)


def init_of(nspawn: int) -> int:
    """The container's systemd: the process named systemd whose ancestor is nspawn."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if (entry / "comm").read_text().strip() != "systemd":
                continue
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            grandparent = int((Path("/proc") / str(parent) / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if nspawn in (parent, grandparent):
            return int(entry.name)
    return 0


@pytest.fixture(scope="module")
def machine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Machine]:
    tmp = tmp_path_factory.mktemp("nspawn")
    root = tmp / "root"
    subprocess.run(["cp", "-a", str(base_rootfs()), str(root)], check=True)
    packages = root / "packages"
    packages.mkdir()
    for version in (OLD, NEW):
        build_package(version, tmp / f"build-{version}").rename(packages / f"fathom-agent_{version}_amd64.deb")
    log = open(ARTIFACTS / "nspawn-console.log", "wb")  # noqa: SIM115 - closed below
    process = subprocess.Popen(
        [*IDLE, "systemd-nspawn", "-D", str(root), "--boot", "--register=no", "--keep-unit", "--console=passive",
         f"--machine=fathom-pkg-{os.getpid()}"],
        stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    box = Machine(root, process)
    try:
        box.init_pid = wait_for("the container's systemd", lambda: init_of(process.pid), 60, 0.5)
        wait_for(
            "the container to finish booting",
            lambda: box.run("systemctl", "is-system-running", check=False).strip() in ("running", "degraded"),
            120,
        )
        yield box
    finally:
        if box.init_pid:
            subprocess.run(["nsenter", "-t", str(box.init_pid), "-a", "systemctl", "poweroff"], check=False)
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
        shutil.rmtree(root, ignore_errors=True)


def agent_row(stack: Stack) -> dict[str, str] | None:
    reply = stack.session().get(f"{stack.url}/api/v1/agents/", timeout=10)
    reply.raise_for_status()
    found: list[dict[str, str]] = [agent for agent in reply.json() if agent["name"] == NAME]
    return found[0] if found else None


def enrolment_token(stack: Stack, tmp: Path) -> str:
    """The token as docs/install.md makes them at scale: deploy/enrolment-tokens.py with an
    operator's write-scope API token, one line per host."""
    api_token = stack.session().post(
        f"{stack.url}/api/v1/api-tokens/", json={"name": "rollout", "scope": "write", "expires_at": None}, timeout=10
    )
    assert api_token.status_code == 201, api_token.text
    hosts = tmp / "hosts.txt"
    hosts.write_text(f"# the hosts to roll out\n{NAME}\n")
    done = subprocess.run(
        ["python3", str(ROOT / "deploy" / "enrolment-tokens.py"), stack.url, str(hosts)],
        env={**os.environ, "FATHOM_API_TOKEN": api_token.json()["token"]},
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    name, token = done.stdout.split()
    assert name == NAME
    return token


def shown_version(stack: Stack) -> str | None:
    return (agent_row(stack) or {}).get("agent_version")


def ping_results(stack: Stack, agent_id: str) -> int:
    rows = stack.query(
        "SELECT count(*) FROM measurements_run WHERE source_id = %s AND test_type = 'ping' AND status = 'ok'", agent_id
    )
    return int(rows[0][0])


def test_the_package_installs_enrols_delivers_upgrades_and_removes(stack: Stack, machine: Machine) -> None:
    try:
        install_enrol_upgrade_remove(stack, machine)
    finally:
        # The stack is shared by the suite's later modules: retire the agent so no mesh,
        # alert or page counts it once its container is gone.
        if (agent := agent_row(stack)) is not None:
            stack.session().post(f"{stack.url}/api/v1/agents/{agent['id']}/decommission/", timeout=10)


def install_enrol_upgrade_remove(stack: Stack, machine: Machine) -> None:
    machine.run("apt-get", "update", "-q")
    machine.run("apt-get", "install", "-y", "-q", f"/packages/fathom-agent_{OLD}_amd64.deb")
    assert machine.run("fathom-agent", "--version").strip() == f"fathom-agent {OLD}"
    assert machine.unit("ActiveState")["ActiveState"] == "inactive", "not started before it is configured"

    token = enrolment_token(stack, machine.root.parent)
    address = f"{SYSTEST_NET}.9"
    settings = {
        "FATHOM_SERVER": stack.url,
        "FATHOM_ENROLL_TOKEN": token,
        "FATHOM_AGENT_NAME": NAME,
        "FATHOM_AGENT_ADDRESS": address,
        "FATHOM_IPERF3_BIND": address,
        "FATHOM_IPERF3_PORT": str(free_port(address)),
        "FATHOM_ECHO_BIND": address,
        "FATHOM_ECHO_PORT": str(free_port(address)),
        "FATHOM_PLAN_POLL_INTERVAL_S": "5",
    }
    env_file = machine.root / "etc" / "fathom-agent.env"
    env_file.write_text("".join(f"{key}={value}\n" for key, value in settings.items()))
    # What the post-install message asks for first: the host is ready (exit 0, no failure).
    port = settings["FATHOM_IPERF3_PORT"]
    report = machine.run("fathom-agent", "doctor", "--server", stack.url, "--iperf3-port", port)
    assert "fail" not in [line.split()[0] for line in report.splitlines()], report
    assert report.startswith("ok    iperf3       3.12 with authentication"), report
    machine.run("systemctl", "enable", "--now", "fathom-agent.service")

    agent = wait_for("the packaged agent to enrol", lambda: agent_row(stack), 60)
    agent_id = str(agent["id"])
    wait_for("a ping result from the packaged agent", lambda: ping_results(stack, agent_id) > 0, 90)
    first = machine.unit("MainPID", "User", "ActiveState")
    assert first["ActiveState"] == "active" and first["User"] == "fathom-agent", first
    status = machine.run("cat", f"/proc/{first['MainPID']}/status")  # a PID of the container's
    caps = {line.split(":")[0]: line.split()[1] for line in status.splitlines() if line.startswith("Cap")}
    # CAP_NET_RAW (13) for ping, CAP_NET_BIND_SERVICE (10) for the reflector's port 862: nothing more.
    wanted = (1 << 13) | (1 << 10)
    assert caps["CapEff"] == caps["CapPrm"] == f"{wanted:016x}", f"CAP_NET_RAW and CAP_NET_BIND_SERVICE only: {caps}"
    credential_file = machine.root / "var" / "lib" / "fathom-agent" / "credential.json"
    credential = credential_file.read_text()
    assert oct(credential_file.stat().st_mode & 0o777) == "0o600"
    wait_for("the Agents API to show the installed version", lambda: shown_version(stack) == OLD, 60)

    machine.run("apt-get", "install", "-y", "-q", f"/packages/fathom-agent_{NEW}_amd64.deb")
    second = wait_for(
        "the upgraded agent to restart",
        lambda: (
            (unit := machine.unit("MainPID", "ActiveState"))["ActiveState"] == "active"
            and unit["MainPID"] not in ("0", first["MainPID"])
            and unit
        ),
        60,
    )
    delivered = ping_results(stack, agent_id)
    wait_for("the Agents API to show the upgraded version", lambda: shown_version(stack) == NEW, 60)
    wait_for("ping results after the upgrade", lambda: ping_results(stack, agent_id) > delivered, 60)
    assert credential_file.read_text() == credential, "the upgrade kept the credential"
    assert (agent_row(stack) or {}).get("id") == agent_id, "no second enrolment"
    assert json.loads(credential)["agent_id"] == agent_id

    machine.run("apt-get", "remove", "-y", "-q", "fathom-agent")
    assert machine.unit("ActiveState")["ActiveState"] in ("inactive", "failed"), "removal stops it"
    assert "fathom-agent" not in machine.run("cat", f"/proc/{second['MainPID']}/cmdline", check=False), "it stopped"
    assert credential_file.read_text() == credential, "removal keeps the state"
    assert (machine.root / "etc" / "fathom-agent.env").exists(), "removal keeps the conffile"
