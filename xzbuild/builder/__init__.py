"""Variant builds: idf.py runner (local or container), process pool, content-addressed cache, release artifacts."""
