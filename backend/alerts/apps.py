from django.apps import AppConfig


class AlertsConfig(AppConfig):
    """Rules over findings, agents and runs; alerts grouped into incidents; silences;
    delivery to email, Slack and webhooks through an outbox."""

    name = "alerts"

    def ready(self) -> None:
        from alerts import choices  # noqa: F401 - registers its choice sets
