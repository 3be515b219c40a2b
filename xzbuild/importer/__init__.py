"""Import boards from an upstream xiaozhi-esp32 checkout into board YAML files."""

from xzbuild.importer.run import ImportReport, import_firmware

__all__ = ["ImportReport", "import_firmware"]
