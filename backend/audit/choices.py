"""Choice sets of the audit log: what kind of object changed, and how."""

from django.db import models

from core import choices as registry


class AuditObject(models.TextChoices):
    MESH = "mesh", "Mesh"
    AGENT = "agent", "Agent"
    ENROLLMENT_TOKEN = "enrollment_token", "Enrolment token"
    API_TOKEN = "api_token", "API token"
    RULE = "rule", "Alert rule"
    SILENCE = "silence", "Silence"
    CHANNEL = "channel", "Channel"
    PERSON = "person", "Person"
    SETTING = "setting", "Setting"


class AuditAction(models.TextChoices):
    CREATE = "create", "Created"
    UPDATE = "update", "Changed"
    DELETE = "delete", "Deleted"
    REVERT = "revert", "Reverted"
    REVOKE = "revoke", "Revoked"
    REKEY = "rekey", "Re-keyed"
    RENAME = "rename", "Renamed"
    DECOMMISSION = "decommission", "Decommissioned"
    EXPIRE = "expire", "Expired"


AUDIT_OBJECT_COLORS = dict.fromkeys(AuditObject, "#57606a")
AUDIT_ACTION_COLORS = {
    AuditAction.CREATE: "#1a7f37",
    AuditAction.UPDATE: "#0969da",
    AuditAction.DELETE: "#cf222e",
    AuditAction.REVERT: "#9a6700",
    AuditAction.REVOKE: "#8250df",
    AuditAction.REKEY: "#8250df",
    AuditAction.RENAME: "#0969da",
    AuditAction.DECOMMISSION: "#6e7781",
    AuditAction.EXPIRE: "#6e7781",
}

registry.register("audit_object", AuditObject, AUDIT_OBJECT_COLORS)
registry.register("audit_action", AuditAction, AUDIT_ACTION_COLORS)
