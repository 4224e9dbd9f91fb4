"""The default "Throughput regression" rule follows drops only: a path that got faster is a
finding, not a critical page. A rule an operator has scoped already is left as it is."""

from typing import Any

from django.db import migrations

RULE = "Throughput regression"
DROPS = [{"name": "direction", "op": "=", "value": "down"}]


def scope_to_drops(apps: Any, schema_editor: Any) -> None:
    apps.get_model("alerts", "Rule").objects.filter(name=RULE, scope=[]).update(scope=DROPS)


def unscope(apps: Any, schema_editor: Any) -> None:
    apps.get_model("alerts", "Rule").objects.filter(name=RULE, scope=DROPS).update(scope=[])


class Migration(migrations.Migration):
    dependencies = [("alerts", "0003_silence_cron")]
    operations = [migrations.RunPython(scope_to_drops, unscope)]
