"""I/O expanders (TCA9554, XL9555, AW9523, PCA9557, M5 IOE): addresses, masks and expander pin roles."""

from xzbuild.parts.base import F, Part

_XIO = ("USB_SEL", "SYS_POW", "SPK_EN", "EN_3V3A", "EN_4G", "KEY_M", "VBUS_EN", "KEY_Q", "IO_SBU2", "IO_SBU1",
        "CHG_CTRL", "KEY_L", "CHRG", "EXT_GPIO0", "EXT_GPIO1", "VDD_2V8_EN", "ESP_ADC_SEL", "PA_CTRL", "VDDA_3V3_EN",
        "KEY_K1", "KEY_K2", "BAT_CHRG_EN", "TP_CAM_RESET", "LCD_BL", "BAT_CHRG", "VDD_3V3_EN", "LED_RED", "LED_BLUE",
        "VBAT_EN")
_IOE = ("LCD_POWER", "PA_EN", "TOUCH_RST", "LCD_RST", "CODEC_POWER", "MOTOR")
_IOE1 = ("LCD_BL", "AUDIO_PWR", "PA_EN", "TOUCH_RST", "LCD_RST", "LCD_PWR")

PART = Part("io_expander", "I/O expander chips and the roles of their pins.", (
    F("address", "addr", "I2C_ADDRESS", "BSP_IO_EXPANDER_I2C_ADDRESS"),
    F("aw9523b_address", "addr", "AW9523B_ADDR"),
    F("m5ioe1_address", "addr", "M5IOE1_I2C_ADDR"),
    F("input_mask", "addr", "DRV_IO_EXP_INPUT_MASK"),
    F("output_mask", "addr", "DRV_IO_EXP_OUTPUT_MASK"),
    F("xl9555_int", "gpio", "XL9555_INT_GPIO"),
    F("aw9523b_int", "gpio", "AW9523B_INT_GPIO"),
    *(F("xio_" + n.lower(), "ident", "XIO_" + n) for n in _XIO),
    *(F("ioe_" + n.lower(), "ident", "IOE_PIN_" + n) for n in _IOE),
    *(F("ioe1_" + n.lower(), "ident", "IOE1_PIN_" + n) for n in _IOE1),
))
