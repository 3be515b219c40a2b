"""Code generation: board files -> config.json, config.h, archetype sources and the Kconfig/CMake tables.

Entry points: :func:`xzbuild.codegen.generated_files.build_plan` (what to write), :mod:`xzbuild.codegen.writer`
(drift check, write-if-changed, overlay), :mod:`xzbuild.codegen.kconfig_check` (fragment validation),
:mod:`xzbuild.codegen.scaffold` (``boards new``).
"""
