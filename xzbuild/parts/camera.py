"""DVP camera: data, sync and SCCB pins, clock."""

from xzbuild.parts.base import F, Field, Part, family

_SPELL = ("CAMERA_PIN_{}", "CAM_PIN_{}", "{}_GPIO_NUM", "SPARKBOT_CAMERA_{}", "CAMERA_{}")


def _pin(name: str, signal: str, *extra: str, bus: str | None = None) -> Field:
    return F(name, "gpio", *(s.format(signal) for s in _SPELL), *extra, bus=bus)


PART = Part("camera", "DVP camera pins and clock.", (
    _pin("pwdn", "PWDN", "CAMERA_PWDN_PIN", "OV_PWDN_IO"),
    _pin("reset", "RESET", "CAMERA_RESET_PIN", "OV_RESET_IO", "CAM_RST"),
    _pin("xclk", "XCLK", "CAMERA_MCLK"),
    _pin("sioc", "SIOC", "CAMERA_SCL", bus="i2c_scl"),  # SCCB often shares the codec's I2C bus
    _pin("siod", "SIOD", "CAMERA_SDA", bus="i2c_sda"),
    _pin("vsync", "VSYNC"),
    _pin("href", "HREF", "SPARKBOT_CAMERA_HSYNC", "CAMERA_HSYNC", "CAM_PIN_LREF"),
    _pin("pclk", "PCLK"),
    *family("d{}", "gpio", 8, "CAMERA_PIN_D{}", "CAM_PIN_D{}", "SPARKBOT_CAMERA_D{}", "CAMERA_D{}"),
    F("xclk_freq_hz", "int", "XCLK_FREQ_HZ", "CAMERA_XCLK_FREQ", "SPARKBOT_CAMERA_XCLK_FREQ", "CAMERA_XCLK_FREQ_HZ"),
    F("sccb_freq_hz", "int", "CAMERA_SCCB_FREQ_HZ"),
    F("power_2v8", "int", "CAM_2V8_EN"),
))
