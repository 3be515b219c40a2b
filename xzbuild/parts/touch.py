"""Touch panel controller on I2C."""

from xzbuild.parts.base import F, Part

PART = Part("touch", "Touch controller pins, bus and address.", (
    F("i2c_sda", "gpio", "TP_PIN_NUM_SDA", "TP_PIN_NUM_TP_SDA", "TOUCH_I2C_SDA_PIN", "I2C_Touch_SDA_PIN",
      "Dev_Touch_I2C_SDA_PIN", "LCD_TP_SDA", bus="i2c_sda"),
    F("i2c_scl", "gpio", "TP_PIN_NUM_SCL", "TP_PIN_NUM_TP_SCL", "TOUCH_I2C_SCL_PIN", "I2C_Touch_SCL_PIN",
      "Dev_Touch_I2C_SCL_PIN", "LCD_TP_SCL", bus="i2c_scl"),
    F("interrupt", "gpio", "TP_PIN_NUM_INT", "TOUCH_INT_PIN", "TP_PIN_NUM_TP_INT", "TOOUCH_INT_PIN", "TOUCH_INT_GPIO",
      "DISPLAY_TOUCH_INT_PIN", "PIN_NUM_TOUCH_INT", "BSP_LCD_TOUCH_INT"),
    F("reset", "gpio", "TP_PIN_NUM_RST", "TP_PIN_NUM_TP_RST", "TOOUCH_RST_PIN", "TOUCH_RST_PIN",
      "DISPLAY_TOUCH_RST_PIN", "PIN_NUM_TOUCH_RST", "BSP_LCD_TOUCH_RST"),
    F("port", "ident", "TP_PORT"),
    F("address", "addr", "I2C_Touch_ADDRESS"),
    F("pad1", "gpio", "TOUCH_PAD1"),
    F("pad2_1", "gpio", "TOUCH_PAD2_1"),
    F("pad2_2", "gpio", "TOUCH_PAD2_2"),
))
