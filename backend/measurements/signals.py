"""Signals other apps listen to, so measurements never imports the apps built on it."""

from django.dispatch import Signal

# Sent inside ingest's transaction after a batch's new results are written, with
# agent=<the submitting Agent> and results=<the new results as the contract has them>.
# A receiver that raises rolls the batch back, so listeners stay consistent with the rows.
results_stored = Signal()
