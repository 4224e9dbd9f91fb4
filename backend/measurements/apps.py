from django.apps import AppConfig


class MeasurementsConfig(AppConfig):
    """Probe results: the hypertables, ingest of agents' batches, and path aggregations."""

    name = "measurements"
