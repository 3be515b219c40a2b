"""Which ESP-SR models a bundle carries: the firmware's Kconfig choice plus upstream's sdkconfig scan.

``WAKE_WORD_TYPE`` (main/Kconfig.projbuild) defaults to AFE on ESP32-S3/P4/S31 with PSRAM and to disabled
otherwise; an explicit ``CONFIG_USE_*=y`` counts only when its ``depends on`` holds. Upstream's builder then
packs the ``CONFIG_SR_WN_*`` models only for the ESP/AFE types, and MultiNet models only for the custom
type (spec §1). Model directories come from an ESP-SR ``model/`` tree; the sizes below let a bundle be
checked against its partition even when that tree is not available.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from assets_gen.index import Multinet
from assets_gen.srmodels import SrModel, load_model_dir
from xzbuild.core.errors import Location, UserError

_AFE_TARGETS = ("esp32s3", "esp32p4", "esp32s31")
_ESP_TARGETS = ("esp32c3", "esp32c5", "esp32c6")
# (sdkconfig substring, model) — the first match of each list wins, as in upstream's builder.
_MN_CN = (
    ("SR_MN_CN_MULTINET3_SINGLE_RECOGNITION", "mn3_cn"),
    ("SR_MN_CN_MULTINET4_5_SINGLE_RECOGNITION_QUANT8", "mn4q8_cn"),
    ("SR_MN_CN_MULTINET4_5_SINGLE_RECOGNITION", "mn4_cn"),
    ("SR_MN_CN_MULTINET5_RECOGNITION_QUANT8", "mn5q8_cn"),
    ("SR_MN_CN_MULTINET6_QUANT", "mn6_cn"),
    ("SR_MN_CN_MULTINET6_AC_QUANT", "mn6_cn_ac"),
    ("SR_MN_CN_MULTINET7_QUANT", "mn7_cn"),
    ("SR_MN_CN_MULTINET7_AC_QUANT", "mn7_cn_ac"),
)
_MN_EN = (
    ("SR_MN_EN_MULTINET5_SINGLE_RECOGNITION_QUANT8", "mn5q8_en"),
    ("SR_MN_EN_MULTINET5_SINGLE_RECOGNITION", "mn5_en"),
    ("SR_MN_EN_MULTINET6_QUANT", "mn6_en"),
    ("SR_MN_EN_MULTINET7_QUANT", "mn7_en"),
)
# Packed sizes of common models (spec §5), used to reserve room when the model files are not at hand.
KNOWN_MODEL_SIZES = {
    "wn9s_nihaoxiaozhi": 125_791, "wn9s_hiesp": 125_783, "wn9s_hilexin": 125_786, "wn9s_hijason": 125_787,
    "wn9_nihaoxiaozhi_tts": 292_000, "mn6_cn": 3_690_000, "mn7_cn": 2_670_000, "fst": 9_600,
}
WN9_DEFAULT_SIZE = 292_000  # the wn9_* family is ~290-292 KB


@dataclass(frozen=True)
class WakeWordPlan:
    """The resolved wake-word setup of one build: type, models to pack and the custom-word entry."""

    kind: str  # disabled | esp | afe | custom
    wakenet: tuple[str, ...] = ()
    multinet: tuple[str, ...] = ()
    custom: Multinet | None = None

    @property
    def models(self) -> tuple[str, ...]:
        """Every model directory name the bundle needs."""
        return self.wakenet + self.multinet


def effective_config(layers: list[list[str]]) -> dict[str, str]:
    """Fold sdkconfig layers (later wins) into ``{SYMBOL: value}``; ``# CONFIG_X is not set`` means ``n``."""
    values: dict[str, str] = {}
    for lines in layers:
        for raw in lines:
            line = raw.strip()
            if line.startswith("# CONFIG_") and line.endswith(" is not set"):
                values[line[2:-11]] = "n"
            elif line.startswith("CONFIG_") and "=" in line:
                key, value = line.split("=", 1)
                values[key] = value
    return config_from_assignments(values)


def config_from_assignments(assignments: Mapping[str, str]) -> dict[str, str]:
    """``{"CONFIG_X": '"v"'}`` (e.g. a variant's effective sdkconfig) → ``{"X": "v"}``."""
    return {key.removeprefix("CONFIG_"): value.strip().strip('"') for key, value in assignments.items()}


def wake_word_type(target: str, psram: bool, config: dict[str, str]) -> str:
    """Resolve the ``WAKE_WORD_TYPE`` choice the way Kconfig does (explicit choice if allowed, else default)."""
    allowed = {
        "WAKE_WORD_DISABLED": True,
        "USE_ESP_WAKE_WORD": target in _ESP_TARGETS or (target == "esp32" and psram),
        "USE_AFE_WAKE_WORD": target in _AFE_TARGETS and psram,
        "USE_CUSTOM_WAKE_WORD": target in _AFE_TARGETS and psram,
    }
    kinds = {"WAKE_WORD_DISABLED": "disabled", "USE_ESP_WAKE_WORD": "esp", "USE_AFE_WAKE_WORD": "afe",
             "USE_CUSTOM_WAKE_WORD": "custom"}
    chosen = [sym for sym in kinds if config.get(sym) == "y" and allowed[sym]]
    if chosen:
        return kinds[chosen[-1]]
    return "afe" if allowed["USE_AFE_WAKE_WORD"] else "disabled"


def plan_from_config(target: str, psram: bool, config: dict[str, str]) -> WakeWordPlan:
    """The models upstream's builder would pack for this effective configuration."""
    kind = wake_word_type(target, psram, config)
    selected = [k for k, v in config.items() if v == "y"]
    wakenet = tuple(
        sym.removesuffix("_MULTI").split("_SR_WN_")[-1].removeprefix("SR_WN_").lower()
        for sym in selected if sym.startswith("SR_WN_") and "_NONE" not in sym
    )
    mn_text = " ".join(sym for sym in selected if sym.startswith("SR_MN_"))
    multinet = [next((m for key, m in table if key in mn_text), "") for table in (_MN_CN, _MN_EN)]
    mn = tuple(m for m in multinet if m)
    if "MULTINET6" in mn_text or "MULTINET7" in mn_text:
        mn += ("fst",)
    if kind in ("esp", "afe"):
        return WakeWordPlan(kind, wakenet=wakenet)
    if kind == "custom":
        if not mn:
            raise UserError("custom wake word selected but no CONFIG_SR_MN_* MultiNet model; select one")
        word = config.get("CUSTOM_WAKE_WORD", "xiao tu dou")
        display = config.get("CUSTOM_WAKE_WORD_DISPLAY", "小土豆")
        threshold = int(config.get("CUSTOM_WAKE_WORD_THRESHOLD", "20")) / 100.0
        return WakeWordPlan(kind, multinet=mn, custom=Multinet(multinet_language(mn), threshold, ((word, display),)))
    return WakeWordPlan(kind)


def multinet_language(models: tuple[str, ...]) -> str:
    """``en`` only when every MultiNet model is English; otherwise ``cn`` (upstream's rule)."""
    has_cn = any("_cn" in m or "cn_" in m for m in models)
    has_en = any("_en" in m or "en_" in m for m in models)
    return "en" if has_en and not has_cn else "cn"


def load_models(plan: WakeWordPlan, esp_sr_model_dir: Path) -> list[SrModel]:
    """Load the plan's model directories from an ESP-SR ``model/`` tree (wakenet_model/, multinet_model/)."""
    out = []
    for name in plan.wakenet:
        out.append(_model(esp_sr_model_dir / "wakenet_model" / name))
    for name in plan.multinet:
        out.append(_model(esp_sr_model_dir / "multinet_model" / name))
    return out


def _model(path: Path) -> SrModel:
    if not path.is_dir():
        raise UserError(
            f"ESP-SR model {path.name!r} not found; pass the esp-sr 'model' directory that contains it",
            Location(str(path)),
        )
    return load_model_dir(path)


def reserved_size(name: str) -> int:
    """Bytes to reserve for a model whose files are not available (known size or its family's size)."""
    if name in KNOWN_MODEL_SIZES:
        return KNOWN_MODEL_SIZES[name]
    if name.startswith("wn9s_"):
        return KNOWN_MODEL_SIZES["wn9s_nihaoxiaozhi"]
    return WN9_DEFAULT_SIZE
