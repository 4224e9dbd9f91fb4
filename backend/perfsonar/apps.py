from django.apps import AppConfig


class PerfsonarConfig(AppConfig):
    """perfSONAR nodes as mesh members: Fathom drives their pScheduler (tasks created,
    renewed and deleted), takes in what their http archiver pushes, polls what it missed,
    and reads and writes pSConfig templates."""

    name = "perfsonar"

    def ready(self) -> None:
        from perfsonar import (
            choices,  # noqa: F401 - registers its choice sets
            signals,  # noqa: F401 - reconciles tasks when meshes change
        )
