from django.apps import AppConfig


class InventoryConfig(AppConfig):
    """Agents, their enrolment and credentials, and the host facts they report."""

    name = "inventory"
    default_auto_field = "django.db.models.BigAutoField"
