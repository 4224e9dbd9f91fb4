from django.apps import AppConfig


class AnalysisConfig(AppConfig):
    """Ceilings, diagnoses, RTT modes and regressions computed from the measurements."""

    name = "analysis"

    def ready(self) -> None:
        from analysis import choices, signals  # noqa: F401 - registers its choice sets and receivers
