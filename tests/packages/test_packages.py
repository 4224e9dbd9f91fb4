"""`make packages` (deploy/packaging/build.sh): fathom-agent as .deb and .rpm for amd64 and
arm64, inspected with each format's own tools: the version the binary reports, the probes'
tools as dependencies with their minimum versions, the config file kept as a conffile with
mode 0600, the systemd unit and the state directory, and maintainer scripts that create the
package's user, restart on upgrade, stop only on removal and remove state only on purge.
Installing and booting them under real systemd is the nspawn test's work."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from .elf import is_static

ROOT = Path(__file__).resolve().parents[2]
VERSION = "0.3.0+test.1"
ARCHES = {"amd64": ("amd64", "x86_64"), "arm64": ("arm64", "aarch64")}


def run(*command: str | Path, cwd: Path = ROOT) -> str:
    done = subprocess.run([str(part) for part in command], cwd=cwd, capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"{command}: {done.stderr}\n{done.stdout}"
    return done.stdout


@pytest.fixture(scope="module")
def packages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Its own output directory: the nspawn test builds packages at the same time in another lane.
    out = tmp_path_factory.mktemp("packages")
    done = subprocess.run(
        # Yields the CPU to the lab lane's emulator, which runs beside this suite.
        ["nice", "-n", "19", "bash", "deploy/packaging/build.sh"],
        cwd=ROOT,
        env={**os.environ, "PKG_VERSION": VERSION, "PKG_OUT": str(out)},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr + done.stdout
    return out


def deb(packages: Path, arch: str) -> Path:
    return packages / f"fathom-agent_{VERSION}_{ARCHES[arch][0]}.deb"


def rpm(packages: Path, arch: str) -> Path:
    return packages / f"fathom-agent-{VERSION}-1.{ARCHES[arch][1]}.rpm"


def control_file(package: Path, name: str) -> str:
    tar = subprocess.run(["dpkg-deb", "--ctrl-tarfile", str(package)], capture_output=True, check=True).stdout
    return subprocess.run(["tar", "-xO", f"./{name}"], input=tar, capture_output=True, check=True).stdout.decode()


@pytest.mark.parametrize("arch", ARCHES)
def test_the_deb_declares_its_version_dependencies_and_conffile(packages: Path, arch: str) -> None:
    package = deb(packages, arch)
    fields = {
        key: run("dpkg-deb", "-f", package, key).strip() for key in ("Package", "Version", "Architecture", "Depends")
    }
    assert fields == {
        "Package": "fathom-agent",
        "Version": VERSION,
        "Architecture": ARCHES[arch][0],
        "Depends": "iperf3 (>= 3.7), iputils-ping, traceroute (>= 1:2.0.0)",
    }
    assert control_file(package, "conffiles").split() == ["/etc/fathom-agent.env"]
    listing = {line.split()[-1]: line.split()[0] for line in run("dpkg-deb", "-c", package).splitlines()}
    assert listing["./etc/fathom-agent.env"] == "-rw-------"
    assert listing["./usr/bin/fathom-agent"] == "-rwxr-xr-x"
    assert listing["./usr/bin/fathom-agent-start"] == "-rwxr-xr-x"
    assert listing["./usr/lib/systemd/system/fathom-agent.service"] == "-rw-r--r--"
    assert listing["./var/lib/fathom-agent/"] == "drwx------"


def test_the_binary_reports_the_package_version(packages: Path, tmp_path: Path) -> None:
    run("dpkg-deb", "-x", deb(packages, "amd64"), tmp_path)
    assert run(tmp_path / "usr/bin/fathom-agent", "--version").strip() == f"fathom-agent {VERSION}"
    assert is_static(tmp_path / "usr/bin/fathom-agent"), "the agent must be a static binary"


def test_the_unit_runs_as_the_package_user_with_raw_sockets_and_port_862_only(packages: Path, tmp_path: Path) -> None:
    run("dpkg-deb", "-x", deb(packages, "amd64"), tmp_path)
    unit = (tmp_path / "usr/lib/systemd/system/fathom-agent.service").read_text()
    settings = dict(line.split("=", 1) for line in unit.splitlines() if "=" in line and not line.startswith("#"))
    assert settings["User"] == settings["Group"] == "fathom-agent"
    assert settings["ExecStart"] == "/usr/bin/fathom-agent-start"
    # ping's raw sockets and the TWAMP-light reflector's port 862, nothing more.
    assert settings["AmbientCapabilities"] == settings["CapabilityBoundingSet"] == "CAP_NET_RAW CAP_NET_BIND_SERVICE"
    assert settings["ProtectSystem"] == "strict"
    assert settings["NoNewPrivileges"] == "yes"
    assert settings["StateDirectory"] == "fathom-agent"


def test_the_maintainer_scripts_handle_install_upgrade_remove_and_purge(packages: Path) -> None:
    package = deb(packages, "amd64")
    scripts = {name: control_file(package, name) for name in ("preinst", "postinst", "prerm", "postrm")}
    for name, text in scripts.items():
        subprocess.run(["sh", "-n"], input=text, text=True, check=True)
        assert text.startswith("#!/bin/sh\n"), name
    assert "useradd --system" in scripts["preinst"]
    assert "try-restart fathom-agent.service" in scripts["postinst"]
    assert "disable --now fathom-agent.service" in scripts["prerm"]
    assert 'case "${1:-}" in\n  remove|0)' in scripts["prerm"], "an upgrade must not stop the agent"
    assert 'if [ "${1:-}" = "purge" ]; then\n  rm -rf /var/lib/fathom-agent' in scripts["postrm"]


@pytest.mark.parametrize("arch", ARCHES)
def test_the_rpm_declares_the_same_with_rpms_names(packages: Path, arch: str) -> None:
    package = rpm(packages, arch)
    query = ("rpm", "-qp", "--nosignature")
    assert run(*query, "--qf", "%{NAME} %{VERSION} %{ARCH}", package) == f"fathom-agent {VERSION} {ARCHES[arch][1]}"
    requires = [line for line in run(*query, "--requires", package).splitlines() if not line.startswith("rpmlib(")]
    assert sorted(requires) == ["iperf3 >= 3.7", "iputils", "traceroute >= 2.0.0"]
    files = run(*query, "--qf", "[%{FILEMODES:perms} %{FILEFLAGS:fflags} %{FILENAMES}\n]", package).splitlines()
    assert "-rw------- cn /etc/fathom-agent.env" in files, files
    assert "drwx------  /var/lib/fathom-agent" in files, files
    scripts = run(*query, "--scripts", package)
    for scriptlet in ("preinstall", "postinstall", "preuninstall", "postuninstall"):
        assert f"{scriptlet} scriptlet (using /bin/sh)" in scripts, scripts
