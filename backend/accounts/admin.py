"""People and groups in the admin site, to read only: a change to a person goes through the
People API, which checks it (the last admin stays) and writes it to the audit log."""

from __future__ import annotations

from django.contrib import admin
from django.contrib.auth.admin import GroupAdmin, UserAdmin
from django.contrib.auth.models import Group, User

from core.admin import ReadOnlyAdmin

admin.site.unregister(User)
admin.site.unregister(Group)


@admin.register(User)
class ReadOnlyUserAdmin(ReadOnlyAdmin, UserAdmin[User]):
    pass


@admin.register(Group)
class ReadOnlyGroupAdmin(ReadOnlyAdmin, GroupAdmin):
    pass
