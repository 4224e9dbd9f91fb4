from django.apps import AppConfig


class AnalysisConfig(AppConfig):
    """Ceilings, diagnoses, RTT modes and regressions computed from the measurements."""

    name = "analysis"
