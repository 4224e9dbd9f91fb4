from django.apps import AppConfig


class MeshesConfig(AppConfig):
    """Who measures whom, how often: the plans agents pull."""

    name = "meshes"

    def ready(self) -> None:
        from meshes import (
            choices,  # noqa: F401 - registers its choice sets
            signals,  # noqa: F401 - connects the re-planning on agent changes
        )
