# Analysis version 6: a receive-window-limited run's binding ceiling is the window over the
# run's own RTT under load (analysis/diagnosis.py binding_rate); older rows are recomputed.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("analysis", "0007_analysis_v5_binding_ceiling"),
    ]

    operations = [
        migrations.AlterField(
            model_name="runanalysis",
            name="analysis_version",
            field=models.IntegerField(default=6),
        ),
        migrations.AlterField(
            model_name="sweepmodes",
            name="analysis_version",
            field=models.IntegerField(default=6),
        ),
    ]
