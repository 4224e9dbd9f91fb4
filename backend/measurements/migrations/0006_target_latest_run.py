"""TargetLatestRun: the newest run per source, external target and test type, so the targets
of list meshes can be listed without scanning the Run hypertable; filled from the runs stored
so far. Their targets are normalised first (one spelling per host: ingest stores them so from
now on), and an index serves one target's runs."""

import ipaddress
from typing import Any

import django.db.models.deletion
from django.db import migrations, models


def normalize_target(value: str) -> str:
    """A frozen copy of measurements.targets.normalize_target, as this migration applied it."""
    text = value.strip()
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        pass
    if text.endswith(".") and len(text) > 1:
        text = text[:-1]
    return text.lower() or value


FILL = """
INSERT INTO measurements_targetlatestrun (source_id, target, test_type, run_id, started_at, status)
SELECT DISTINCT ON (r.source_id, r.target, r.test_type) r.source_id, r.target, r.test_type, r.id, r.started_at, r.status
FROM measurements_run r JOIN inventory_agent a ON a.id = r.source_id
WHERE r.destination_id IS NULL
ORDER BY r.source_id, r.target, r.test_type, r.started_at DESC
"""


def fill(apps: Any, schema_editor: Any) -> None:
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT DISTINCT target FROM measurements_run WHERE destination_id IS NULL")
        for (target,) in cursor.fetchall():
            if (normalized := normalize_target(target)) != target:
                cursor.execute(
                    "UPDATE measurements_run SET target = %s WHERE destination_id IS NULL AND target = %s",
                    [normalized, target],
                )
        cursor.execute(FILL)


class Migration(migrations.Migration):

    dependencies = [
        ('inventory', '0004_agent_kind'),
        ('measurements', '0005_path_ends_source_destination'),
    ]

    operations = [
        migrations.CreateModel(
            name='TargetLatestRun',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('target', models.CharField(max_length=255)),
                ('test_type', models.CharField(choices=[('ping', 'Ping'), ('throughput', 'Throughput'), ('flowsweep', 'Flow sweep'), ('trace', 'Trace')], max_length=32)),
                ('run_id', models.UUIDField()),
                ('started_at', models.DateTimeField()),
                ('status', models.CharField(choices=[('ok', 'OK'), ('failed', 'Failed'), ('missed', 'Missed')], max_length=16)),
            ],
        ),
        migrations.AddIndex(
            model_name='run',
            index=models.Index(condition=models.Q(('destination_id__isnull', True)), fields=['source_id', 'target', '-started_at'], name='run_target_time'),
        ),
        migrations.AddField(
            model_name='targetlatestrun',
            name='source',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='inventory.agent'),
        ),
        migrations.AddConstraint(
            model_name='targetlatestrun',
            constraint=models.UniqueConstraint(fields=('source', 'target', 'test_type'), name='target_latest_unique'),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
