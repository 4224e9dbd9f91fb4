"""Interop tests: Fathom against a fake perfSONAR pScheduler node."""
