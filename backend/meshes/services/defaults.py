"""The default mesh and its tests (perfSONAR's regular tests among every active agent)."""

from __future__ import annotations

from meshes.models import Mesh, MeshTest
from meshes.specs import DEFAULT_TESTS


def ensure_default_mesh() -> Mesh:
    """The mesh of every active agent with the default tests (migration 0002 makes it too)."""
    mesh, created = Mesh.objects.get_or_create(
        name="default",
        defaults={"description": "Every active agent, perfSONAR's regular tests", "all_agents": True},
    )
    if created:
        create_default_tests(mesh)
    return mesh


def create_default_tests(mesh: Mesh) -> None:
    for default in DEFAULT_TESTS:
        MeshTest.objects.create(
            mesh=mesh,
            name=default.name,
            test_type=default.test_type,
            spec=dict(default.spec),
            interval_s=default.interval_s,
            slip_s=default.slip_s,
        )
