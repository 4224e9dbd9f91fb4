"""The rules a fresh install starts with (alerts.defaults)."""

from typing import Any

from django.db import migrations

from alerts.defaults import DEFAULT_RULES

def add_rules(apps: Any, schema_editor: Any) -> None:
    Rule = apps.get_model("alerts", "Rule")
    for spec in DEFAULT_RULES:
        Rule.objects.get_or_create(name=spec["name"], defaults=spec)


def remove_rules(apps: Any, schema_editor: Any) -> None:
    apps.get_model("alerts", "Rule").objects.filter(name__in=[r["name"] for r in DEFAULT_RULES]).delete()


class Migration(migrations.Migration):
    dependencies = [("alerts", "0001_initial")]
    operations = [migrations.RunPython(add_rules, remove_rules)]
