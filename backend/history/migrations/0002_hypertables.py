"""Turns the rollup tables into TimescaleDB hypertables on `bucket` (Apache-2 build: no
policies; retention is drop_chunks per table, history/retention.py).

Chunk intervals: a 100-agent mesh writes 14 million minute rows a day, 240 thousand hour rows
and 10 thousand day rows, so day, month and year chunks hold a few million rows each.
"""

from django.db import migrations

FORWARD = """
SELECT create_hypertable('history_rttminute', by_range('bucket', INTERVAL '1 day'), migrate_data => true);
SELECT create_hypertable('history_throughputminute', by_range('bucket', INTERVAL '1 day'), migrate_data => true);
SELECT create_hypertable('history_rtthour', by_range('bucket', INTERVAL '30 days'), migrate_data => true);
SELECT create_hypertable('history_throughputhour', by_range('bucket', INTERVAL '30 days'), migrate_data => true);
SELECT create_hypertable('history_rttday', by_range('bucket', INTERVAL '365 days'), migrate_data => true);
SELECT create_hypertable('history_throughputday', by_range('bucket', INTERVAL '365 days'), migrate_data => true);
"""


class Migration(migrations.Migration):
    dependencies = [("history", "0001_initial"), ("measurements", "0002_hypertables")]

    # Hypertables cannot go back to plain tables; reversing drops them with the app.
    operations = [migrations.RunSQL(FORWARD, reverse_sql=migrations.RunSQL.noop)]
