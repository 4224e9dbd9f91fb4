"""The agents' iperf3 servers admit only the clients of their planned slots."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from core import contract
from fathom.testing import FathomTestCase
from meshes.iperf3_auth import password_sha256, slot_password, slot_username
from meshes.models import Slot
from meshes.services.slot_planning import plan_exclusive_slots

PLAN_URL = "/api/v1/agent/plan/"
FACTS_URL = "/api/v1/agent/host-facts/"
DATA = Path(__file__).parent / "data"
RSA_PUBLIC_KEY = (DATA / "iperf3-rsa-public.pem").read_text()


def facts(public_key: Any) -> dict[str, Any]:
    return {"collected_at": "2026-11-25T10:00:00Z", "iperf3_port": 5201, "iperf3_public_key": public_key}


class SlotCredentialTests(FathomTestCase):
    def report_key(self, public_key: str) -> None:
        agent = self.agent_client(self.frankfurt, self.frankfurt_credential)
        assert agent.put(FACTS_URL, facts(public_key), format="json").status_code == 200

    def plans(self) -> tuple[dict[str, Any], dict[str, Any]]:
        athens = self.agent_client(self.athens, self.athens_credential).get(PLAN_URL).json()
        frankfurt = self.agent_client(self.frankfurt, self.frankfurt_credential).get(PLAN_URL).json()
        return athens, frankfurt

    def test_a_server_without_a_key_gets_clients_without_credentials(self) -> None:
        plan_exclusive_slots(seed=1)
        athens, _ = self.plans()
        assert athens["slots"] and all(slot["iperf3_auth"] is None for slot in athens["slots"])

    def test_each_slot_has_its_own_credential_and_the_server_lists_exactly_its_clients(self) -> None:
        self.report_key(RSA_PUBLIC_KEY)
        plan_exclusive_slots(seed=1)
        athens, frankfurt = self.plans()
        to_frankfurt = [slot for slot in athens["slots"] if slot["peer"]["name"] == "frankfurt"]
        assert to_frankfurt
        auths = [slot["iperf3_auth"] for slot in to_frankfurt]
        assert all(auth["public_key"] == RSA_PUBLIC_KEY for auth in auths)
        # Another slot, another credential: one leaked opens the server for one slot only.
        other = Slot.objects.exclude(id=to_frankfurt[0]["id"]).first()
        assert other is not None
        assert slot_password(other.id) != auths[0]["password"] and slot_username(other.id) != auths[0]["username"]
        served = {user["username"]: user["password_sha256"] for user in frankfurt["iperf3_users"]}
        for auth in auths:
            assert served[auth["username"]] == password_sha256(auth["username"], auth["password"])
        # frankfurt serves exactly the slots in which it is the destination, and no one else.
        theirs = Slot.objects.filter(destination=self.frankfurt, start_at__lte=frankfurt["valid_until"])
        assert set(served) == {slot_username(slot.id) for slot in theirs}
        # athens reported no key: nobody is told a credential for it.
        assert all(slot["iperf3_auth"] is None for slot in frankfurt["slots"]), frankfurt["slots"]
        validator = contract.validator("plan.v1.schema.json")
        assert not list(validator.iter_errors(athens)) and not list(validator.iter_errors(frankfurt))

    def test_a_new_key_changes_the_clients_plan(self) -> None:
        plan_exclusive_slots(seed=1)
        client = self.agent_client(self.athens, self.athens_credential)
        etag = client.get(PLAN_URL)["ETag"]
        self.report_key(RSA_PUBLIC_KEY)
        assert client.get(PLAN_URL, HTTP_IF_NONE_MATCH=etag).status_code == 200

    def test_malformed_keys_are_refused_and_change_nothing(self) -> None:
        agent = self.agent_client(self.frankfurt, self.frankfurt_credential)
        body = RSA_PUBLIC_KEY.replace("-----BEGIN PUBLIC KEY-----\n", "")
        for key in [
            "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ",
            body,
            RSA_PUBLIC_KEY.replace("MIIB", "M!IB", 1),
            RSA_PUBLIC_KEY + RSA_PUBLIC_KEY,
            (DATA / "ec-public.pem").read_text(),  # iperf3 takes RSA keys only
            "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n",
            "-----BEGIN PUBLIC KEY-----\n" + "A" * 5000 + "\n-----END PUBLIC KEY-----\n",
            17,
        ]:
            reply = agent.put(FACTS_URL, facts(key), format="json")
            assert reply.status_code == 400 and "iperf3_public_key" in reply.json(), key
        self.frankfurt.refresh_from_db()
        assert self.frankfurt.host_facts is None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.skipif(shutil.which("iperf3") is None or shutil.which("openssl") is None, reason="needs iperf3, openssl")
def test_real_iperf3_admits_the_slot_credential_and_refuses_others(settings: Any) -> None:
    """The hash the server's plan lists is the one iperf3 itself compares (on loopback)."""
    import uuid

    settings.SECRET_KEY = "test-key-for-iperf3-credentials"
    slot_id = uuid.uuid4()
    username, password = slot_username(slot_id), slot_password(slot_id)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        subprocess.run(
            ["openssl", "genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", root / "key.pem"],
            check=True,
            capture_output=True,
        )
        subprocess.run(
            ["openssl", "pkey", "-in", root / "key.pem", "-pubout", "-out", root / "public.pem"],
            check=True,
            capture_output=True,
        )
        (root / "users.csv").write_text(f"{username},{password_sha256(username, password)}\n")

        server_auth = [
            "--rsa-private-key-path",
            str(root / "key.pem"),
            "--authorized-users-path",
            str(root / "users.csv"),
        ]

        def client_auth(user: str) -> list[str]:
            return ["--username", user, "--rsa-public-key-path", str(root / "public.pem")]

        def attempt(user: str, secret: str) -> subprocess.CompletedProcess[str]:
            port = free_port()
            server = subprocess.Popen(
                [*("iperf3", "-s", "-1", "--forceflush", "-B", "127.0.0.1", "-p", str(port)), *server_auth],
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
            )
            try:
                assert server.stdout is not None
                assert "listening" in server.stdout.readline() + server.stdout.readline()
                return subprocess.run(
                    [*("iperf3", "-c", "127.0.0.1", "-p", str(port), "-t", "1", "-J"), *client_auth(user)],
                    env={**os.environ, "IPERF3_PASSWORD": secret},
                    capture_output=True,
                    text=True,
                    timeout=30,
                )
            finally:
                server.kill()
                server.wait()

        admitted = json.loads(attempt(username, password).stdout)
        assert "error" not in admitted and admitted["end"]["sum_received"]["bytes"] > 0
        refused = json.loads(attempt(username, slot_password(uuid.uuid4())).stdout)
        assert "authorization failed" in refused["error"]
