"""The default mesh: every active agent, perfSONAR's regular tests (throughput every 6 h for
20 s, ping every 5 min with 10 packets) plus a flow sweep every 15 min and a trace every
30 min. A fresh install measures as soon as two agents enrol; operators edit it like any other."""

from typing import Any

from django.db import migrations

DEFAULT_TESTS = (
    ("throughput", "throughput", 6 * 3600, 6 * 3600, {"duration_s": 20}),
    ("ping", "ping", 300, 0, {"count": 10}),
    ("flowsweep", "flowsweep", 900, 0, {}),
    ("trace", "trace", 1800, 0, {}),
)


def create_default_mesh(apps: Any, schema_editor: Any) -> None:
    Mesh = apps.get_model("meshes", "Mesh")
    MeshTest = apps.get_model("meshes", "MeshTest")
    mesh, created = Mesh.objects.get_or_create(
        name="default",
        defaults={"description": "Every active agent, perfSONAR's regular tests", "kind": "mesh", "all_agents": True},
    )
    if created:
        for name, test_type, interval_s, slip_s, spec in DEFAULT_TESTS:
            MeshTest.objects.create(
                mesh=mesh, name=name, test_type=test_type, interval_s=interval_s, slip_s=slip_s, spec=spec
            )


class Migration(migrations.Migration):
    dependencies = [("meshes", "0001_meshes_and_slots")]

    operations = [migrations.RunPython(create_default_mesh, migrations.RunPython.noop)]
