from django.apps import AppConfig


class MeasurementsConfig(AppConfig):
    """Probe results: the hypertables, ingest of agents' batches, and path aggregations."""

    name = "measurements"

    def ready(self) -> None:
        from measurements import choices  # noqa: F401 - registers its choice sets
