"""Other on-board peripherals: SD card, IMU, keyboard, servos and motors of robot boards."""

from xzbuild.parts.base import F, Part

_SERVOS = ("Left_Pitch_Pin", "Right_Pitch_Pin", "Body_Pin", "Right_Roll_Pin", "Left_Roll_Pin", "Head_Pin",
           "RIGHT_FOOT_PIN", "LEFT_HAND_PIN", "RIGHT_HAND_PIN", "RIGHT_LEG_PIN", "LEFT_FOOT_PIN", "LEFT_LEG_PIN",
           "LEFT_FRONT_LEG_PIN", "RIGHT_REAR_LEG_PIN", "LEFT_REAR_LEG_PIN", "RIGHT_FRONT_LEG_PIN",
           "BL_GPIO_NUM", "FL_GPIO_NUM", "FR_GPIO_NUM", "BR_GPIO_NUM")

PART = Part("peripherals", "SD card, IMU, keyboard and actuator pins.", (
    F("sd_spi_host", "ident", "SD_SPI_HOST"),
    F("sd_clk", "gpio", "SD_CLK", "SD_SCK", "SPISD_PIN_CLK"),
    F("sd_cmd", "gpio", "SD_CMD", "SD_MOSI", "SPISD_PIN_MOSI"),
    F("sd_data0", "gpio", "SD_DATA0", "SD_MISO", "SPISD_PIN_MISO"),
    F("sd_cs", "gpio", "SD_CS", "SPISD_PIN_TS"),
    F("sd_power_ldo_chan", "int", "SD_CARD_PWR_LDO_CHAN"),
    F("imu_bmi270_addr", "addr", "IMU_BMI270_ADDR"),
    F("imu_int", "gpio", "IMU_INT_GPIO"),
    F("keyboard_tca8418_addr", "addr", "KEYBOARD_TCA8418_ADDR"),
    F("keyboard_int", "gpio", "KEYBOARD_INT_PIN"),
    F("vibration_motor", "gpio", "VIBRATING_MOTOR_PIN"),
    F("motor_speed_min", "int", "MOTOR_SPEED_MIN"),
    F("motor_speed_max", "int", "MOTOR_SPEED_MAX"),
    F("motor_speed_60", "int", "MOTOR_SPEED_60"),
    F("motor_speed_80", "int", "MOTOR_SPEED_80"),
    F("ap1511b", "gpio", "AP1511B_GPIO"),
    *(F("servo_" + n.lower().removesuffix("_pin").removesuffix("_gpio_num"), "gpio", n)
      for n in _SERVOS),
))
