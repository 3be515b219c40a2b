"""Buttons by role (boot, volume, touch, power, ...) and ADC button ladders."""

from xzbuild.parts.base import F, Part

PART = Part("buttons", "Button GPIOs by role.", (
    F("boot", "gpio", "BOOT_BUTTON_GPIO"),
    F("volume_up", "gpio", "VOLUME_UP_BUTTON_GPIO", "KEY_PLUS_BUTTON_GPIO"),
    F("volume_down", "gpio", "VOLUME_DOWN_BUTTON_GPIO"),
    F("touch", "gpio", "TOUCH_BUTTON_GPIO"),
    F("power", "gpio", "PWR_BUTTON_GPIO"),
    F("asr", "gpio", "ASR_BUTTON_GPIO"),
    F("reset_factory", "gpio", "RESET_FACTORY_BUTTON_GPIO"),
    F("reset_nvs", "gpio", "RESET_NVS_BUTTON_GPIO"),
    F("user", "gpio", "USER_BUTTON_GPIO"),
    F("main", "gpio", "MAIN_BUTTON_GPIO"),
    F("left", "gpio", "LEFT_BUTTON_GPIO", "L_BUTTON_GPIO"),
    F("right", "gpio", "RIGHT_BUTTON_GPIO", "R_BUTTON_GPIO"),
    F("middle", "gpio", "M_BUTTON_GPIO"),
    F("key", "gpio", "KEY_BUTTON_GPIO", "KEY1_BUTTON_GPIO"),
    F("button1", "gpio", "BUTTON1_GPIO"),
    F("button2", "gpio", "BUTTON2_GPIO"),
    F("audio_wake", "gpio", "AUDIO_WAKE_BUTTON_GPIO"),
    F("move_wake", "gpio", "MOVE_WAKE_BUTTON_GPIO"),
    F("adc_ladder", "gpio", "ADC_BUTTON_GPIO"),
    F("adc_idle_mv", "int", "ADC_BUTTON_IDLE_MV"),
    F("adc_vol_up_mv", "int", "ADC_BUTTON_VOL_UP_MV"),
    F("adc_vol_down_mv", "int", "ADC_BUTTON_VOL_DOWN_MV"),
    F("adc_set_mv", "int", "ADC_BUTTON_SET_MV"),
    F("adc_mode_mv", "int", "ADC_BUTTON_MODE_MV"),
    F("long_press_timeout_us", "int", "LONG_PRESS_TIMEOUT_US"),
))
