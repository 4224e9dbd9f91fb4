from django.apps import AppConfig


class HistoryConfig(AppConfig):
    """Rollups Fathom keeps itself: RTT percentiles, loss and throughput run summaries per path
    at 1 minute, 1 hour and 1 day, refreshed as results arrive, each with its own retention."""

    name = "history"

    def ready(self) -> None:
        import history.signals  # noqa: F401 - marks buckets stale when results are stored
