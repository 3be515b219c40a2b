"""A runner for this repository's GitHub workflows (``python -m tests.workflows``), and its tests."""
