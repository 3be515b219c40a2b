"""xzbuild: board model, code generation, release matrix and build tooling for xiaozhi-esp32."""

__version__ = "0.1.0"
