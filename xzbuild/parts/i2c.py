"""The board's shared I2C bus (when not named after the codec or the touch panel)."""

from xzbuild.parts.base import F, Part

PART = Part("i2c", "Shared system I2C bus.", (
    F("sda", "gpio", "I2C_SDA_IO", "BSP_I2C_SDA", bus="i2c_sda"),
    F("scl", "gpio", "I2C_SCL_IO", "BSP_I2C_SCL", bus="i2c_scl"),
    F("port", "ident", "SYS_I2C_PORT"),
))
