"""LEDs: the built-in status LED (single or strip), lamp and extra indicator pins."""

from xzbuild.parts.base import F, Part

PART = Part("leds", "Status LED, LED strips and lamps.", (
    F("builtin", "gpio", "BUILTIN_LED_GPIO", "LED_GPIO"),
    F("builtin_count", "int", "BUILTIN_LED_NUM"),
    F("builtin_power", "gpio", "BUILTIN_LED_POWER"),
    F("builtin_power_invert", "bool", "BUILTIN_LED_POWER_OUTPUT_INVERT"),
    F("lamp", "gpio", "LAMP_GPIO", doc="the MCP demo lamp"),
    F("green", "gpio", "LED_G"),
    F("ledc_channel", "ident", "LEDC_CHANNEL", "SPARKBOT_LEDC_CHANNEL"),
    F("ledc_timer", "ident", "LEDC_TIMER", "SPARKBOT_LEDC_TIMER"),
))
