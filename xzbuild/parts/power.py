"""Battery and power management: ADC sensing, charge detection, power rails."""

from xzbuild.parts.base import F, Part

PART = Part("power", "Battery sensing, charging and power-rail control.", (
    F("battery_adc", "gpio", "BATTERY_ADC_PIN", "BAT_VSEN_PIN", "BUILTIN_BATTERY_GPIO"),
    F("battery_adc_unit", "ident", "BATTERY_ADC_UNIT", "POWER_ADC_UNIT", "POWER_CBS_ADC_UNIT"),
    F("battery_adc_channel", "ident", "BATTERY_ADC_CHANNEL", "POWER_ADC_CHANNEL", "POWER_BATTERY_ADC_CHANNEL",
      "VBAT_ADC_CHANNEL"),
    F("usb_in_adc_channel", "ident", "POWER_USBIN_ADC_CHANNEL"),
    F("adc_atten", "ident", "ADC_ATTEN"),
    F("adc_width", "ident", "ADC_WIDTH"),
    F("battery_upper_resistor", "int", "BATTERY_UPPER_RESISTOR"),
    F("battery_lower_resistor", "int", "BATTERY_LOWER_RESISTOR"),
    F("full_battery_mv", "int", "FULL_BATTERY_VOLTAGE"),
    F("empty_battery_mv", "int", "EMPTY_BATTERY_VOLTAGE"),
    F("charging", "gpio", "BATTERY_CHARGING_PIN", "POWER_CHARGE_DETECT_PIN", "CHRG_PIN"),
    F("charge_control", "gpio", "CHG_CTRL_PIN"),
    F("battery_enable", "gpio", "BATTERY_EN_PIN"),
    F("usb_in", "gpio", "POWER_USB_IN"),
    F("vbat_power", "gpio", "VBAT_PWR_GPIO", "VBAT_PWR_PIN"),
    F("power_control", "gpio", "Power_Control", "PWR_Control_PIN", "POWER_CTRL", "PWR_EN_GPIO", "SYS_POW_PIN"),
    F("power_detect", "gpio", "Power_Dec"),
    F("mcu_vcc", "gpio", "MCU_VCC_CTL"),
    F("peripheral_vcc", "gpio", "PERP_VCC_CTL"),
    F("phone_ck", "gpio", "PHONE_CK_PIN"),
    F("pmic_addr", "addr", "PM1_I2C_ADDR"),
    F("pmic_charge_state", "ident", "PMIC_PIN_CHARGE_STATE"),
    F("pmic_charge_prog", "ident", "PMIC_PIN_CHARGE_PROG"),
))
