from django.apps import AppConfig


class MeshesConfig(AppConfig):
    """Who measures whom, how often: the plans agents pull."""

    name = "meshes"
