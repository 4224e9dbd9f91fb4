"""Signals other apps listen to, so measurements never imports the apps built on it."""

from django.dispatch import Signal

# Sent inside ingest's transaction after a batch's new results are written, with
# agent=<the submitting Agent> and results=<the new results as the contract has them>.
# A receiver that raises rolls the batch back, so listeners stay consistent with the rows.
results_stored = Signal()

# Sent before a batch that passed the contract and ingest's own checks is stored, with
# agent=<the submitting Agent> and results=<the batch's results>. A receiver returns a list
# of measurements.kinds.base.BatchError for the results it refuses (meshes: paths not in the
# agent's plan); any error refuses the batch.
results_received = Signal()
