"""Turns the run and ping-sample tables into TimescaleDB hypertables.

Works on the Apache-2 build (hypertables, time_bucket, drop_chunks); no policies or
continuous aggregates, which that build refuses. Chunk intervals: runs are few per path and
hour, samples are ten per run, so samples get smaller chunks.
"""

from django.db import migrations

FORWARD = """
CREATE EXTENSION IF NOT EXISTS timescaledb;
SELECT create_hypertable('measurements_run', by_range('started_at', INTERVAL '7 days'), migrate_data => true);
SELECT create_hypertable('measurements_pingsample', by_range('time', INTERVAL '1 day'), migrate_data => true);
"""


class Migration(migrations.Migration):
    dependencies = [("measurements", "0001_initial")]

    # Hypertables cannot go back to plain tables; reversing drops them with the app.
    operations = [migrations.RunSQL(FORWARD, reverse_sql=migrations.RunSQL.noop)]
