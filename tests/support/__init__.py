"""Test-only helpers (server fixtures). Never imported by the application."""
