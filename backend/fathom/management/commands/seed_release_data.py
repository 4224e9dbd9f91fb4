"""`manage.py seed_release_data`: fills an empty database with data of every kind through this
release's own code, for the upgrade test (tests/system/test_upgrade.py).

The upgrade test runs this command of the previous release on that release's migrations,
then migrates the database with the current code and checks that nothing was lost. So it
writes what an install accumulates, each through the service that writes it in production:
users, enrolled agents with host facts, the default meshes and alert rules, every valid
contract example result (ping, throughput, UDP ramp, streams probe, trace, flow sweep,
one-way latency) ingested as an agent uploads it, the rollups of their hours, and the
analysis of their runs. Deterministic, except for ids and secrets it makes itself.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from ipaddress import ip_network
from typing import Any

from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.test.utils import override_settings

from alerts.defaults import ensure_default_rules
from core import contract
from history.backfill import mark_range
from history.refresh import refresh
from inventory.models import Agent
from inventory.services import create_enrollment_token, digest, enroll_agent, new_secret, record_host_facts
from measurements.ingest import InvalidBatch, ingest_batch
from meshes.models import Mesh, MeshTest
from meshes.services.defaults import ensure_default_mesh

# The peer the contract examples name, and the day they were recorded (fathom/testing.py):
# ingest judges their times against that day, not the wall clock.
EXAMPLE_PEER_ID = "0b7e4c1d-2f3a-4b5c-8d9e-0a1b2c3d4e5f"
EXAMPLES_RECORDED_AT = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
LAB_NETWORK = "198.18.0.0/15"
SYSCTLS = {
    "net.ipv4.tcp_rmem": "4096 131072 6291456",
    "net.ipv4.tcp_wmem": "4096 16384 4194304",
    "net.core.rmem_max": "212992",
    "net.core.wmem_max": "212992",
    "net.ipv4.tcp_congestion_control": "cubic",
}


def host_facts(name: str, collected_at: datetime) -> dict[str, Any]:
    """An agent's host facts as it reports them (contract/host-facts.v1.schema.json)."""
    facts = {
        "collected_at": collected_at.isoformat().replace("+00:00", "Z"),
        "agent_version": "release",
        "hostname": name,
        "kernel": "6.1.0-28-amd64",
        "os": "Debian GNU/Linux 12 (bookworm)",
        "cpus": 4,
        "iperf3_version": "3.12",
        "sysctls": SYSCTLS,
    }
    errors = [error.message for error in contract.validator("host-facts.v1.schema.json").iter_errors(facts)]
    if errors:
        raise CommandError(f"the host facts break the contract: {errors}")
    return facts


class Command(BaseCommand):
    help = "Fills an empty database with data of every kind, made by this release's code (the upgrade test's)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", help="print what was made as JSON")

    def handle(self, *args: Any, **options: Any) -> None:
        if Agent.objects.exists():
            raise CommandError("the database already has agents: seed_release_data fills an empty one")
        User.objects.create_superuser("release-owner", password=new_secret())
        ensure_default_mesh()
        ensure_default_rules()
        # Agents may report one-way latency only where a mesh has a latency test.
        latency = Mesh.objects.create(name="latency", all_agents=True)
        MeshTest.objects.create(mesh=latency, name="latency", test_type="latency", spec={}, interval_s=60)
        issued = create_enrollment_token(3600, "release data")
        # Lab addresses (RFC 2544's block), which an install admits only when it lists them.
        with override_settings(AGENT_ADDRESS_NETWORKS=(ip_network(LAB_NETWORK),)):
            uploader = enroll_agent(issued.plaintext, "release-a", "198.18.1.1", "release").agent
        peer = Agent.objects.create(
            id=EXAMPLE_PEER_ID, name="release-b", address="198.18.2.1", credential_sha256=digest(new_secret())
        )
        for agent in (uploader, peer):
            collected_at = EXAMPLES_RECORDED_AT - timedelta(days=1)
            record_host_facts(agent, host_facts(agent.name, collected_at), collected_at)
        stored: dict[str, int] = {}
        for example in sorted((contract.EXAMPLES_DIR / "result-batch" / "valid").glob("*.json")):
            try:
                statuses = ingest_batch(uploader, json.loads(example.read_text()), now=EXAMPLES_RECORDED_AT)
            except InvalidBatch as refused:
                raise CommandError(f"{example.name} was refused: {refused}") from refused
            stored[example.stem] = sum(1 for status in statuses if status.status == "created")
        since, until = EXAMPLES_RECORDED_AT - timedelta(days=1), EXAMPLES_RECORDED_AT
        mark_range(since, until)
        refreshed = refresh()
        call_command("analyze", since=since.isoformat(), until=until.isoformat(), stdout=self.stdout)
        made = {"agents": [uploader.name, peer.name], "results": stored, "rollups": refreshed}
        self.stdout.write(json.dumps(made) if options["json"] else f"seeded: {made}")
