"""A task's state "unanswered": its POST got no answer, and the node may have made it."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("perfsonar", "0001_initial"),
    ]

    operations = [
        migrations.AlterField(
            model_name="task",
            name="state",
            field=models.CharField(
                choices=[
                    ("active", "Active"),
                    ("refused", "Refused"),
                    ("deleted", "Deleted"),
                    ("unanswered", "No answer"),
                ],
                default="active",
                max_length=16,
            ),
        ),
    ]
