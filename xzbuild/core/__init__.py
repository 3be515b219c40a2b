"""The neutral core every layer uses: user errors with locations (``errors``), atomic file writes
(``fsutil``), the YAML loader that keeps marks (``yamlmarks``), the field checker (``check``), the ESP image
readers (``images``) and the one CMake statement reader (``cmake``) every module that reads a CMakeLists.txt uses.

It imports nothing from the rest of xzbuild, so ``model`` and ``parts``, ``build`` and ``matrix``, and the
``hil`` and ``assets_gen`` packages beside them all depend on it rather than on each other's internals.
"""
