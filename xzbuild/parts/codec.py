"""Audio codec: control bus, chip addresses, power amplifier."""

from xzbuild.parts.base import F, Part

PART = Part("codec", "Audio codec chips on I2C and the speaker power amplifier.", (
    F("i2c_sda", "gpio", "AUDIO_CODEC_I2C_SDA_PIN", bus="i2c_sda"),
    F("i2c_scl", "gpio", "AUDIO_CODEC_I2C_SCL_PIN", bus="i2c_scl"),
    F("i2c_port", "ident", "AUDIO_CODEC_I2C_NUM", "AUDIO_CODEC_I2C_PORT"),
    F("es8311_addr", "addr", "AUDIO_CODEC_ES8311_ADDR"),
    F("es7210_addr", "addr", "AUDIO_CODEC_ES7210_ADDR", "BSP_CODEC_ES7210_ADDR"),
    F("es8388_addr", "addr", "AUDIO_CODEC_ES8388_ADDR"),
    F("es8389_addr", "addr", "AUDIO_CODEC_ES8389_ADDR"),
    F("es8374_addr", "addr", "AUDIO_CODEC_ES8374_ADDR"),
    F("aw88298_addr", "addr", "AUDIO_CODEC_AW88298_ADDR"),
    F("pa_pin", "gpio", "AUDIO_CODEC_PA_PIN", "AUDIO_CODEC_GPIO_PA", "BSP_PA_PIN", "AUDIO_PA_CTL_GPIO",
      "BSP_POWER_AMP_IO", "AUDIO_CODEC_I2C_PA_EN", doc="power amplifier enable"),
    F("pa_pin_1", "gpio", "AUDIO_CODEC_PA_PIN_1"),
    F("pa_pin_2", "gpio", "AUDIO_CODEC_PA_PIN_2"),
    F("use_pca9557", "flag", "AUDIO_CODEC_USE_PCA9557"),
    F("use_mclk", "bool", "AUDIO_CODEC_USE_MCLK"),
    F("power_pin", "gpio", "Audio_PWR_PIN", "CODEC_PWR_PIN", "CORDEC_POWER_CTRL"),
))
