"""Turns the latency-interval table into a hypertable.

A latency session reports once a minute per path by default, as many rows a day as pings
(ten every five minutes): day chunks, as the ping samples have.
"""

from django.db import migrations

FORWARD = """
SELECT create_hypertable('measurements_latencyinterval', by_range('time', INTERVAL '1 day'), migrate_data => true);
"""


class Migration(migrations.Migration):
    dependencies = [("measurements", "0008_latency_interval")]

    operations = [migrations.RunSQL(FORWARD, reverse_sql=migrations.RunSQL.noop)]
