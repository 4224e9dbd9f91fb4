# Analysis version 9: a flow sweep's flows differ when Kruskal-Wallis or a permutation test of
# their minima says so, and minima split on the lower half's spread (analysis/modes.py), so
# late tails no longer hide ECMP members; older rows are recomputed.

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("analysis", "0010_analysis_v8_steady_rate_and_send_share"),
    ]

    operations = [
        migrations.AlterField(
            model_name="runanalysis",
            name="analysis_version",
            field=models.IntegerField(default=9),
        ),
        migrations.AlterField(
            model_name="sweepmodes",
            name="analysis_version",
            field=models.IntegerField(default=9),
        ),
    ]
