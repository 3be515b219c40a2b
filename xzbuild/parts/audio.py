"""Audio path: sample rates, I2S pins (duplex or simplex mic/speaker), PDM, reference input."""

from xzbuild.parts.base import F, Part

PART = Part("audio", "I2S/PDM audio: rates, pins and the AEC reference input.", (
    F("input_sample_rate", "int", "AUDIO_INPUT_SAMPLE_RATE", doc="microphone sample rate in Hz"),
    F("output_sample_rate", "int", "AUDIO_OUTPUT_SAMPLE_RATE", doc="speaker sample rate in Hz"),
    F("input_reference", "bool", "AUDIO_INPUT_REFERENCE", doc="an input channel carries the speaker reference (AEC)"),
    F("simplex", "flag", "AUDIO_I2S_METHOD_SIMPLEX", doc="separate I2S buses for microphone and speaker"),
    F("input_channels", "int", "AUDIO_INPUT_CHANNELS"),
    F("output_channels", "int", "AUDIO_OUTPUT_CHANNELS"),
    F("default_output_volume", "int", "AUDIO_DEFAULT_OUTPUT_VOLUME"),
    F("adc_mic_channel", "int", "AUDIO_ADC_MIC_CHANNEL"),
    # Duplex I2S (one bus, codec boards).
    F("i2s_mclk", "gpio", "AUDIO_I2S_GPIO_MCLK", "BSP_I2S_MCLK"),
    F("i2s_bclk", "gpio", "AUDIO_I2S_GPIO_BCLK", "BSP_I2S_SCLK"),
    F("i2s_ws", "gpio", "AUDIO_I2S_GPIO_WS", "BSP_I2S_LCLK"),
    F("i2s_din", "gpio", "AUDIO_I2S_GPIO_DIN", "BSP_I2S_DSIN"),
    F("i2s_dout", "gpio", "AUDIO_I2S_GPIO_DOUT", "BSP_I2S_DOUT"),
    F("i2s_din_1", "gpio", "AUDIO_I2S_GPIO_DIN_1"),
    F("i2s_din_2", "gpio", "AUDIO_I2S_GPIO_DIN_2"),
    # Simplex I2S: microphone bus.
    F("mic_ws", "gpio", "AUDIO_I2S_MIC_GPIO_WS", "AUDIO_MIC_I2S_GPIO_WS", "AUDIO_MIC_WS_PIN"),
    F("mic_sck", "gpio", "AUDIO_I2S_MIC_GPIO_SCK", "AUDIO_MIC_I2S_GPIO_BCLK", "AUDIO_MIC_SCK_PIN"),
    F("mic_din", "gpio", "AUDIO_I2S_MIC_GPIO_DIN", "AUDIO_MIC_I2S_GPIO_DATA", "AUDIO_MIC_SD_PIN"),
    # Simplex I2S: speaker bus.
    F("spk_dout", "gpio", "AUDIO_I2S_SPK_GPIO_DOUT", "AUDIO_SPKR_I2S_GPIO_DATA"),
    F("spk_bclk", "gpio", "AUDIO_I2S_SPK_GPIO_BCLK", "AUDIO_SPKR_I2S_GPIO_BCLK"),
    F("spk_lrck", "gpio", "AUDIO_I2S_SPK_GPIO_LRCK", "AUDIO_SPKR_I2S_GPIO_LRCLK"),
    F("spk_enable", "gpio", "AUDIO_SPKR_ENABLE", "SPK_EN_PIN", "AUDIO_SPK_GPIO_PIN"),
    F("mic_enable", "gpio", "AUDIO_MIC_ENABLE"),
    F("mute", "gpio", "AUDIO_MUTE_PIN"),
    # PDM speaker output.
    F("pdm_speak_p", "gpio", "AUDIO_PDM_SPEAK_P_GPIO"),
    F("pdm_speak_n", "gpio", "AUDIO_PDM_SPEAK_N_GPIO"),
    F("pdm_upsample_fs", "int", "AUDIO_PDM_UPSAMPLE_FS"),
))
