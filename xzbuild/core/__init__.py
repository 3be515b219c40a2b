"""The neutral core every layer uses: user errors with locations (``errors``), atomic file writes
(``fsutil``), the YAML loader that keeps marks (``yamlmarks``), the field checker (``check``), the ESP image
readers (``images``), the one CMake statement reader (``cmake``) every module that reads a CMakeLists.txt uses,
and the Kconfig readers: what a Kconfig means through esp-idf-kconfig (``kconfig``) and how it is laid out
(``kconfig_text``).

It imports nothing from the rest of xzbuild, so ``model`` and ``parts``, ``build`` and ``matrix``, and the
``hil`` and ``assets_gen`` packages beside them all depend on it rather than on each other's internals.
"""
