# Analysis version 8: a run's steady rate is the trimmed mean of its measured seconds
# (analysis/intervals.py trimmed_mean), and a send-buffer-limited run's binding ceiling is the
# buffer at the share the run kept in flight (analysis/diagnosis.py send_held_rate); older
# rows are recomputed.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("analysis", "0009_analysis_v7_omitted_retransmits"),
    ]

    operations = [
        migrations.AlterField(
            model_name="runanalysis",
            name="analysis_version",
            field=models.IntegerField(default=8),
        ),
        migrations.AlterField(
            model_name="sweepmodes",
            name="analysis_version",
            field=models.IntegerField(default=8),
        ),
    ]
