"""Manifest service: the HTTP edge, the event store and migrations (see /work/shared/DESIGN.md)."""
