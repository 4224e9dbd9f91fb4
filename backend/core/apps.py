from django.apps import AppConfig


class CoreConfig(AppConfig):
    """What every app shares; owns no models."""

    name = "core"
