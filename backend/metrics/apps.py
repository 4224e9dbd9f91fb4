from django.apps import AppConfig


class MetricsConfig(AppConfig):
    """/metrics: Fathom's paths, agents and own health in Prometheus's exposition format."""

    name = "metrics"
