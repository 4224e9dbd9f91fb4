"""Rules for the latency tests' one-way findings, on installs that predate them (a fresh install
gets them from 0002 with the other defaults). A rule of that name already there is kept."""

from typing import Any

from django.db import migrations

from alerts.defaults import DEFAULT_RULES

NAMES = ("One-way delay shift", "One-way loss increase")


def add_rules(apps: Any, schema_editor: Any) -> None:
    Rule = apps.get_model("alerts", "Rule")
    for spec in DEFAULT_RULES:
        if spec["name"] in NAMES:
            Rule.objects.get_or_create(name=spec["name"], defaults=spec)


def remove_rules(apps: Any, schema_editor: Any) -> None:
    apps.get_model("alerts", "Rule").objects.filter(name__in=NAMES).delete()


class Migration(migrations.Migration):
    dependencies = [("alerts", "0006_more_channel_kinds")]
    operations = [migrations.RunPython(add_rules, remove_rules)]
