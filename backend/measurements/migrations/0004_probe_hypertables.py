"""Turns the throughput-interval, flow-sample and trace-path tables into hypertables.

Flow samples come 160 per run every few minutes per path: day chunks. Intervals and trace
paths are fewer: week chunks.
"""

from django.db import migrations

FORWARD = """
SELECT create_hypertable('measurements_throughputinterval', by_range('time', INTERVAL '7 days'), migrate_data => true);
SELECT create_hypertable('measurements_flowsample', by_range('time', INTERVAL '1 day'), migrate_data => true);
SELECT create_hypertable('measurements_tracepath', by_range('time', INTERVAL '7 days'), migrate_data => true);
"""


class Migration(migrations.Migration):
    dependencies = [("measurements", "0003_probes")]

    operations = [migrations.RunSQL(FORWARD, reverse_sql=migrations.RunSQL.noop)]
