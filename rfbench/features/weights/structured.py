"""Placeholder: filled in by its own work item."""
