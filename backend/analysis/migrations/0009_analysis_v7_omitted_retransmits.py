# Analysis version 7: a loss-based flow that lost only in the omitted seconds and stayed far
# below its ceilings is a collapsed flow (analysis/diagnosis.py lost_text); the interval
# stats carry omitted_retransmits. Older rows are recomputed.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("analysis", "0008_analysis_v6_window_at_flow_rtt"),
    ]

    operations = [
        migrations.AlterField(
            model_name="runanalysis",
            name="analysis_version",
            field=models.IntegerField(default=7),
        ),
        migrations.AlterField(
            model_name="sweepmodes",
            name="analysis_version",
            field=models.IntegerField(default=7),
        ),
    ]
