"""One agent's paths (its plan, the check of its uploads) are read from its own meshes only,
and are exactly the fleet's paths from that agent."""

from __future__ import annotations

from typing import ClassVar

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from fathom.testing import FathomTestCase
from inventory.models import Agent
from meshes.choices import MemberSide, MeshKind
from meshes.models import Mesh, MeshMember, MeshTest
from meshes.services.paths import Path, mesh_paths


def described(paths: list[Path]) -> list[tuple[str, str, str, str]]:
    return sorted(
        (path.test_id, str(path.source.pk), str(path.destination.pk) if path.destination else "", path.target)
        for path in paths
    )


class OneSourcesPathsTests(FathomTestCase):
    others: ClassVar[list[Agent]]

    @classmethod
    def setUpTestData(cls) -> None:
        super().setUpTestData()
        cls.others = [
            Agent.objects.create(name=f"far-{index}", address=f"198.18.9.{index + 1}", credential_sha256="0" * 64)
            for index in range(6)
        ]
        Agent.objects.filter(pk=cls.others[5].pk).update(revoked_at=timezone.now())
        Mesh.objects.filter(name="default").update(enabled=False)
        full = Mesh.objects.create(name="full", kind=MeshKind.MESH)
        for agent in (cls.athens, cls.frankfurt, cls.others[0], cls.others[5]):
            MeshMember.objects.create(mesh=full, agent=agent)
        MeshTest.objects.create(mesh=full, name="ping", test_type="ping", interval_s=60)
        MeshTest.objects.create(mesh=full, name="bw", test_type="throughput", interval_s=21600)
        sides = Mesh.objects.create(name="sides", kind=MeshKind.DISJOINT)
        MeshMember.objects.create(mesh=sides, agent=cls.athens, side=MemberSide.A)
        MeshMember.objects.create(mesh=sides, agent=cls.others[1], side=MemberSide.B)
        MeshMember.objects.create(mesh=sides, agent=cls.others[2], side=MemberSide.B)
        MeshTest.objects.create(mesh=sides, name="trace", test_type="trace", interval_s=1800)
        web = Mesh.objects.create(name="web", kind=MeshKind.LIST, targets=["192.0.2.80"])
        MeshMember.objects.create(mesh=web, agent=cls.athens)
        MeshTest.objects.create(mesh=web, name="ping", test_type="ping", interval_s=60)
        elsewhere = Mesh.objects.create(name="elsewhere", kind=MeshKind.MESH)
        for agent in cls.others[3:5]:
            MeshMember.objects.create(mesh=elsewhere, agent=agent)
        MeshTest.objects.create(mesh=elsewhere, name="ping", test_type="ping", interval_s=60)

    def assert_same_as_the_fleets(self, exclusive: bool | None = None) -> None:
        for agent in [self.athens, self.frankfurt, *self.others]:
            fleet = [path for path in mesh_paths(exclusive=exclusive) if path.source.pk == agent.pk]
            assert described(mesh_paths(source=agent, exclusive=exclusive)) == described(fleet), agent.name

    def test_each_agents_paths_are_the_fleets_paths_from_it(self) -> None:
        self.assert_same_as_the_fleets()
        self.assert_same_as_the_fleets(exclusive=True)
        self.assert_same_as_the_fleets(exclusive=False)
        assert len(mesh_paths(source=self.athens)) == 2 * 2 + 2 + 1  # full (2 live peers x 2 tests), sides (2), web (1)

    def test_a_mesh_of_every_agent_still_reaches_every_agent(self) -> None:
        Mesh.objects.filter(name="default").update(enabled=True)
        self.assert_same_as_the_fleets()

    def test_the_agents_it_reads_are_its_meshes_members_not_the_fleet(self) -> None:
        for index in range(40):
            Agent.objects.create(name=f"idle-{index}", address=f"198.18.8.{index + 1}", credential_sha256="0" * 64)
        with CaptureQueriesContext(connection) as queries:
            mesh_paths(source=self.frankfurt)
        agents_read = [query["sql"] for query in queries.captured_queries if 'FROM "inventory_agent"' in query["sql"]]
        assert len(agents_read) == 1 and " IN (" in agents_read[0]

    def test_one_agents_paths_both_ways_are_its_paths_from_and_towards_it_in_one_read(self) -> None:
        for agent in [self.athens, self.frankfurt, *self.others]:
            either = mesh_paths(involving=agent)
            both = mesh_paths(source=agent) + mesh_paths(destination=agent)
            assert described(either) == described(both), agent.name
        with CaptureQueriesContext(connection) as one_read:
            mesh_paths(involving=self.athens)
        with CaptureQueriesContext(connection) as two_reads:
            mesh_paths(source=self.athens)
            mesh_paths(destination=self.athens)
        assert len(one_read.captured_queries) * 2 == len(two_reads.captured_queries)
        with pytest.raises(ValueError, match="involving"):
            mesh_paths(source=self.athens, involving=self.frankfurt)
