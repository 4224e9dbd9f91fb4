from django.apps import AppConfig


class InventoryConfig(AppConfig):
    """Agents, their enrolment and credentials, and the host facts they report."""

    name = "inventory"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from inventory import (
            choices,  # noqa: F401 - registers its choice sets
            openapi_auth,  # noqa: F401 - registers the OpenAPI auth extension
        )
