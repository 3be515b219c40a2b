"""Expression (emote) bundles: what ``build_speaker_assets_bin`` makes for CONFIG_FLASH_EXPRESSION_ASSETS.

A bundle's way: :mod:`.load` reads the inputs (esp_emote_assets component, optional external dir) →
:mod:`.assemble` makes the members and ``index.json`` and packs the mmap container → :mod:`.verify` reads
the bytes back the way the device does and checks them against the partition.
"""
