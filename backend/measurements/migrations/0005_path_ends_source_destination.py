"""A path's two ends are source and destination on every table, as on slots, findings and
analyses: the hypertables' agent_id/peer_id columns are renamed. A rename keeps every chunk
and index (TimescaleDB propagates it to the chunks, PostgreSQL's indexes follow the column),
so the path indexes change in Django's state only, without rebuilding them."""

from django.db import migrations, models

# model, the path index's name, and its time column
PATH_INDEXES = (
    ("run", "run_path_time", "-started_at"),
    ("pingsample", "pingsample_path_time", "-time"),
    ("throughputinterval", "tputinterval_path_time", "-time"),
    ("flowsample", "flowsample_path_time", "-time"),
    ("tracepath", "tracepath_path_time", "-time"),
)


def renamed(model: str, index: str, time: str) -> list[migrations.operations.base.Operation]:
    return [
        migrations.RenameField(model_name=model, old_name="agent_id", new_name="source_id"),
        migrations.RenameField(model_name=model, old_name="peer_id", new_name="destination_id"),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveIndex(model_name=model, name=index),
                migrations.AddIndex(
                    model_name=model, index=models.Index(fields=["source_id", "destination_id", time], name=index)
                ),
            ]
        ),
    ]


class Migration(migrations.Migration):
    dependencies = [("measurements", "0004_probe_hypertables")]

    operations = [operation for model, index, time in PATH_INDEXES for operation in renamed(model, index, time)]
