"""An agent's address is one reachable host, never a way to aim the fleet's probes elsewhere,
and only an operator moves it."""

from __future__ import annotations

import ipaddress
from typing import Any

import pytest
from django.test import SimpleTestCase, override_settings
from django.utils import timezone

from audit.models import AuditEntry
from fathom.testing import FathomTestCase
from inventory.addresses import AddressError, address_family, agent_address, agent_addresses
from inventory.models import Agent
from inventory.services import create_enrollment_token

ENROLL_URL = "/api/v1/agents/enroll/"
LAB = (ipaddress.ip_network("198.18.0.0/15"),)
LOOPBACK = (ipaddress.ip_network("127.0.0.0/8"),)


class AgentAddressRuleTests(SimpleTestCase):
    def test_never_a_host_name_a_prefix_or_no_single_host(self) -> None:
        cases = {
            "athens.example.org": "not an IP address",
            "198.18.1.1/24": "not an IP address",
            "198.18.1.1:5201": "not an IP address",
            "": "not an IP address",
            "0.0.0.0": "unspecified",  # noqa: S104 - an address refused, not bound
            "::": "unspecified",
            "224.0.0.1": "multicast",
            "ff02::1": "multicast",
            "169.254.10.1": "link-local",
            "fe80::1": "link-local",
            "fe80::1%eth0": "zone",
            "255.255.255.255": "broadcast",
        }
        for value, why in cases.items():
            with pytest.raises(AddressError, match=why):
                agent_address(value, LAB + LOOPBACK)

    def test_global_addresses_by_default_other_ranges_only_when_listed(self) -> None:
        assert agent_address("192.88.99.9", ()) == "192.88.99.9"
        assert agent_address(" 2606:4700::1111 ", ()) == "2606:4700::1111"
        for value in ("198.18.1.1", "10.1.2.3", "192.168.1.1", "100.64.0.1", "fd00::1", "192.0.2.1", "240.0.0.1"):
            with pytest.raises(AddressError, match="not a global address"):
                agent_address(value, ())
        assert agent_address("198.18.1.1", LAB) == "198.18.1.1"
        with pytest.raises(AddressError, match="loopback"):
            agent_address("127.0.0.2", LAB)
        with pytest.raises(AddressError, match="loopback"):
            agent_address("::1", LAB)
        assert agent_address("127.0.0.2", LOOPBACK) == "127.0.0.2"

    def test_the_canonical_form_is_stored(self) -> None:
        assert agent_address("2606:4700:0000:0000:0000:0000:0000:1111", ()) == "2606:4700::1111"
        # An IPv4-mapped address is judged, and stored, as the IPv4 address it is.
        assert agent_address("::ffff:198.18.1.1", LAB) == "198.18.1.1"
        with pytest.raises(AddressError, match="loopback"):
            agent_address("::ffff:127.0.0.1", LAB)


class AgentFamiliesTests(SimpleTestCase):
    """A dual-stack agent registers one address per family (issue 33 item 4)."""

    SIX = (ipaddress.ip_network("198.18.0.0/15"), ipaddress.ip_network("2001:2::/48"))

    def test_a_literal_has_a_family_and_a_name_reads_as_ipv4(self) -> None:
        assert [address_family(a) for a in ("198.18.0.1", "2001:2::1", "[2001:2::1]", "::ffff:198.18.0.1")] == [
            4,
            6,
            6,
            4,
        ]
        assert address_family("dca.example.org") == 4

    def test_one_address_per_family_each_checked(self) -> None:
        assert agent_addresses("198.18.0.1", ["2001:2:0::1"], self.SIX) == ("198.18.0.1", ["2001:2::1"])
        assert agent_addresses("2001:2::1", ["198.18.0.1"], self.SIX) == ("2001:2::1", ["198.18.0.1"])
        with pytest.raises(AddressError, match="second IPv4 address"):
            agent_addresses("198.18.0.1", ["198.18.0.2"], self.SIX)
        with pytest.raises(AddressError, match="second IPv6 address"):
            agent_addresses("2001:2::1", ["2001:2::1"], self.SIX)
        with pytest.raises(AddressError, match="link-local"):
            agent_addresses("198.18.0.1", ["fe80::1"], self.SIX)
        with pytest.raises(AddressError, match="not a global address"):
            agent_addresses("198.18.0.1", ["2001:2::1"], LAB)


class EnrolAddressTests(FathomTestCase):
    def enrol(self, token: str, name: str, address: str) -> Any:
        return self.client.post(ENROLL_URL, {"token": token, "name": name, "address": address}, format="json")

    def test_enrolment_refuses_addresses_peers_must_not_probe(self) -> None:
        issued = create_enrollment_token(600)
        unspecified = "0.0.0.0"  # noqa: S104 - an address refused, not bound
        for address in ("127.0.0.1", unspecified, "224.0.0.5", "169.254.1.1", "victim.example.org", "10.0.0.1"):
            reply = self.enrol(issued.plaintext, "geneva", address)
            assert reply.status_code == 400, (address, reply.content)
            assert list(reply.json()) == ["address"], reply.json()
        assert not Agent.objects.filter(name="geneva").exists()
        issued.token.refresh_from_db()
        assert issued.token.used_at is None

    def test_the_allow_list_admits_deployment_ranges(self) -> None:
        issued = create_enrollment_token(600)
        assert self.enrol(issued.plaintext, "geneva", "10.20.0.7").status_code == 400
        with override_settings(AGENT_ADDRESS_NETWORKS=(ipaddress.ip_network("10.0.0.0/8"),)):
            reply = self.enrol(issued.plaintext, "geneva", "10.20.0.7")
        assert reply.status_code == 201, reply.content
        assert Agent.objects.get(name="geneva").address == "10.20.0.7"

    def test_an_agent_cannot_move_itself_by_re_keying(self) -> None:
        issued = create_enrollment_token(600, agent_name="athens", rekey=True)
        reply = self.enrol(issued.plaintext, "athens", "198.18.1.66")
        assert reply.status_code == 403 and "registered at 198.18.1.1" in reply.json()["detail"]
        self.athens.refresh_from_db()
        assert self.athens.address == "198.18.1.1"
        # At its registered address the re-key goes through.
        assert self.enrol(issued.plaintext, "athens", "198.18.1.1").status_code == 201

    def test_an_operator_moves_an_agent_through_the_api_with_the_same_checks(self) -> None:
        operator = self.user_client(self.operator)
        url = f"/api/v1/agents/{self.athens.pk}/"
        refused = operator.patch(url, {"address": "127.0.0.1"}, format="json")
        assert refused.status_code == 400 and "loopback" in str(refused.json()["address"])
        both = operator.patch(url, {"name": "athens-2", "address": "127.0.0.1"}, format="json")
        assert both.status_code == 400
        self.athens.refresh_from_db()
        assert (self.athens.name, self.athens.address) == ("athens", "198.18.1.1"), "nothing half-changed"
        moved = operator.patch(url, {"address": "198.18.1.66"}, format="json")
        assert moved.status_code == 200 and moved.json()["address"] == "198.18.1.66", moved.json()
        entry = AuditEntry.objects.get(object_type="agent", action="update")
        assert entry.actor_name == "operator" and entry.changes["address"] == ["198.18.1.1", "198.18.1.66"]
        assert operator.patch(url, {}, format="json").status_code == 400

    def test_a_dual_stack_agent_enrols_with_both_families_and_re_keys_only_at_both(self) -> None:
        issued = create_enrollment_token(600)
        body = {"token": issued.plaintext, "name": "lisbon", "address": "198.18.0.1", "other_addresses": ["2001:2::1"]}
        for bad, why in (
            (["198.18.0.9"], "second IPv4"),
            (["fe80::1"], "link-local"),
            (["2001:2::1", "2001:2::2"], ""),
        ):
            reply = self.client.post(ENROLL_URL, {**body, "other_addresses": bad}, format="json")
            assert reply.status_code == 400 and why in str(reply.json()), (bad, reply.json())
        assert not Agent.objects.filter(name="lisbon").exists()
        assert self.client.post(ENROLL_URL, body, format="json").status_code == 201
        lisbon = Agent.objects.get(name="lisbon")
        assert (lisbon.addresses, lisbon.families, lisbon.address_for(6)) == (
            ["198.18.0.1", "2001:2::1"],
            [4, 6],
            "2001:2::1",
        )
        rekey = create_enrollment_token(600, agent_name="lisbon", rekey=True)
        again = {**body, "token": rekey.plaintext, "other_addresses": []}
        refused = self.client.post(ENROLL_URL, again, format="json")
        assert refused.status_code == 403 and "198.18.0.1, 2001:2::1" in refused.json()["detail"]
        assert (
            self.client.post(ENROLL_URL, {**again, "other_addresses": ["2001:2::1"]}, format="json").status_code == 201
        )

    def test_an_operator_gives_an_agent_its_ipv6_and_takes_it_away(self) -> None:
        operator = self.user_client(self.operator)
        url = f"/api/v1/agents/{self.athens.pk}/"
        refused = operator.patch(url, {"other_addresses": ["198.18.1.9"]}, format="json")
        assert refused.status_code == 400 and "second IPv4" in str(refused.json())
        added = operator.patch(url, {"other_addresses": ["2001:2::11"]}, format="json")
        assert added.status_code == 200 and added.json()["other_addresses"] == ["2001:2::11"], added.json()
        entry = AuditEntry.objects.get(object_type="agent", action="update")
        assert entry.changes["other_addresses"] == [[], ["2001:2::11"]]
        assert operator.patch(url, {"other_addresses": []}, format="json").json()["other_addresses"] == []

    def test_the_admin_site_only_reads_audited_models(self) -> None:
        """Issue 34 item 3: the admin site could un-revoke an agent, move it, reuse a used
        enrolment token or reset a password, with no audit row."""
        admin = self.user_client(self.owner)
        self.athens.revoked_at = timezone.now()
        self.athens.save(update_fields=["revoked_at"])
        change = f"/admin/inventory/agent/{self.athens.pk}/change/"
        assert admin.get(change).status_code == 200  # shown, to read
        form = {"name": "athens", "address": "198.18.1.66", "revoked_at_0": "", "revoked_at_1": ""}
        assert admin.post(change, form).status_code == 403
        self.athens.refresh_from_db()
        assert self.athens.revoked_at is not None and self.athens.address == "198.18.1.1"
        for url in (
            "/admin/inventory/agent/add/",
            "/admin/inventory/enrollmenttoken/add/",
            f"/admin/auth/user/{self.operator.pk}/password/",
            "/admin/auth/user/add/",
        ):
            assert admin.post(url, {}).status_code == 403, url
        assert admin.get("/admin/auth/user/").status_code == 200
        assert self.operator.check_password("operator-pass-1234")
