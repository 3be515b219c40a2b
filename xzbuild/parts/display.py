"""Display panel: geometry, orientation, colour, backlight, and SPI/QSPI/I2C bus pins.

Upstream boards spell the same signal many ways (the D/C pin alone has 12 spellings); every spelling
listed here maps to one field, and a board keeps its own spelling via ``macros``.
"""

from xzbuild.parts.base import F, Part, family

PART = Part("display", "Display panel geometry, orientation, backlight and bus pins.", (
    F("width", "int", "DISPLAY_WIDTH", "EXAMPLE_LCD_WIDTH", "EXAMPLE_LCD_H_RES", "QSPI_LCD_H_RES", "BSP_LCD_H_RES",
      "SCREEN_WIDTH", doc="pixels"),
    F("height", "int", "DISPLAY_HEIGHT", "EXAMPLE_LCD_HEIGHT", "EXAMPLE_LCD_V_RES", "QSPI_LCD_V_RES",
      "BSP_LCD_V_RES", "SCREEN_HEIGHT", doc="pixels"),
    F("offset_x", "int", "DISPLAY_OFFSET_X", "SCREEN_OFFSET_X"),
    F("offset_y", "int", "DISPLAY_OFFSET_Y", "SCREEN_OFFSET_Y"),
    F("mirror_x", "bool", "DISPLAY_MIRROR_X", "SCREEN_MIRROR_X"),
    F("mirror_y", "bool", "DISPLAY_MIRROR_Y", "SCREEN_MIRROR_Y"),
    F("swap_xy", "bool", "DISPLAY_SWAP_XY", "SCREEN_SWAP_XY"),
    F("rotation_90", "bool", "DISPLAY_ROTATION_90"),
    F("invert_color", "bool", "DISPLAY_INVERT_COLOR"),
    F("rgb_order", "ident", "DISPLAY_RGB_ORDER", doc="LCD_RGB_ELEMENT_ORDER_RGB or _BGR"),
    F("bits_per_pixel", "int", "LCD_BIT_PER_PIXEL", "QSPI_LCD_BIT_PER_PIXEL", "BSP_LCD_BITS_PER_PIXEL",
      "SCREEN_BITS_PER_PIXEL"),
    F("bit_per_pixel", "int", "BSP_LCD_BIT_PER_PIXEL"),
    F("color_format", "ident", "BSP_LCD_COLOR_FORMAT", "SCREEN_COLOR_RGB_PIXEL_FORMAT", "LVGL_COLOR_FORMAT"),
    F("backlight", "gpio", "DISPLAY_BACKLIGHT_PIN", "DISPLAY_BL", "QSPI_PIN_NUM_LCD_BL", "BSP_LCD_BACKLIGHT",
      "LCD_LIGHT", doc="backlight PWM pin"),
    F("backlight_invert", "bool", "DISPLAY_BACKLIGHT_OUTPUT_INVERT", "BACKLIGHT_INVERT"),
    # Panel controller selection flags used by the board sources.
    F("st7789_serial", "flag", "LCD_TYPE_ST7789_SERIAL"),
    F("ili9341_serial", "flag", "LCD_TYPE_ILI9341_SERIAL"),
    F("gc9a01_serial", "flag", "LCD_TYPE_GC9A01_SERIAL"),
    F("sh1106", "flag", "SH1106"),
    # SPI bus.
    F("spi_host", "ident", "DISPLAY_SPI_HOST", "LCD_SPI_HOST", "QSPI_LCD_HOST", "DISPLAY_QSPI_HOST"),
    F("spi_mode", "int", "DISPLAY_SPI_MODE"),
    F("spi_clock_hz", "int", "DISPLAY_SPI_SCLK_HZ"),
    F("mosi", "gpio", "DISPLAY_MOSI_PIN", "DISPLAY_SPI_MOSI_PIN", "LCD_MOSI_PIN", "DISPLAY_MOSI", "LCD_MOSI_GPIO",
      "DISPLAY_MOSI_GPIO", bus="spi_mosi"),
    F("miso", "gpio", "DISPLAY_MISO_PIN", "LCD_MISO_PIN", "DISPLAY_MIS0_PIN", bus="spi_miso"),
    F("sclk", "gpio", "DISPLAY_CLK_PIN", "DISPLAY_SPI_SCLK_PIN", "LCD_SCLK_PIN", "DISPLAY_SCLK_PIN",
      "DISPLAY_SPI_SCK_PIN", "DISPLAY_SCLK", "LCD_SCLK_GPIO", "DISPLAY_CLK_GPIO", "DISPLAY_SCK_PIN", bus="spi_sclk"),
    F("cs", "gpio", "DISPLAY_CS_PIN", "DISPLAY_CS", "DISPLAY_SPI_CS_PIN", "LCD_CS_PIN", "LCD_CS_GPIO",
      "DISPLAY_CS_GPIO", "EXAMPLE_PIN_NUM_LCD_CS", "QSPI_PIN_NUM_LCD_CS", "LCD_CS", "LCD_PIN_CS", "LCD_NUM_CS",
      "DISPLAY_QSPI_CS"),
    F("dc", "gpio", "DISPLAY_DC_PIN", "DISPLAY_DC", "DISPLAY_SPI_DC_PIN", "LCD_DC_PIN", "LCD_DC_GPIO",
      "DISPLAY_DC_GPIO", "LCD_PIN_DC", "LCD_NUM_DC", "LCD_DC", "PIN_NUM_LCD_DC", "EXAMPLE_PIN_NUM_LCD_DC",
      "DISPLAY_RS", doc="data/command select"),
    F("reset", "gpio", "DISPLAY_RST_PIN", "DISPLAY_RES", "DISPLAY_SPI_RESET_PIN", "DISPLAY_RESET_PIN",
      "LCD_RST_PIN", "LCD_RST_GPIO", "DISPLAY_RST_GPIO", "EXAMPLE_PIN_NUM_LCD_RST", "QSPI_PIN_NUM_LCD_RST",
      "LCD_RST", "LCD_PIN_RST", "LCD_NUM_RST", "PIN_NUM_LCD_RST", "BSP_LCD_RST", "DISPLAY_RST"),
    F("reset_1", "gpio", "QSPI_PIN_NUM_LCD_RST_1"),
    F("reset_2", "gpio", "QSPI_PIN_NUM_LCD_RST_2"),
    F("te", "gpio", "DISPLAY_TE_PIN"),
    # I2C (OLED) bus.
    F("i2c_sda", "gpio", "DISPLAY_SDA_PIN", "DISPLAY_SDA", bus="i2c_sda"),
    F("i2c_scl", "gpio", "DISPLAY_SCL_PIN", "DISPLAY_SCL", bus="i2c_scl"),
    # QSPI bus.
    F("qspi_clk", "gpio", "EXAMPLE_PIN_NUM_LCD_PCLK", "QSPI_PIN_NUM_LCD_PCLK", "LCD_PCLK", "DISPLAY_QSPI_SCK"),
    *family("qspi_d{}", "gpio", 4, "EXAMPLE_PIN_NUM_LCD_DATA{}", "QSPI_PIN_NUM_LCD_DATA{}", "LCD_D{}",
            "DISPLAY_DATA{}_PIN", "DISPLAY_QSPI_D{}"),
    # Frame buffer and UI layout.
    F("buffer_lines", "int", "DISPLAY_BUFFER_LINES"),
    F("round_edge_inset", "int", "DISPLAY_ROUND_EDGE_INSET"),
    F("status_bar_top_offset", "int", "DISPLAY_STATUS_BAR_TOP_OFF", "DISPLAY_STATUS_BAR_TOP_OFFSET"),
    F("chat_bar_bottom_offset", "int", "DISPLAY_CHAT_BAR_BOTTOM_OFF", "DISPLAY_CHAT_BAR_BOTTOM_OFFSET"),
    F("chat_bar_width", "int", "DISPLAY_CHAT_BAR_WIDTH"),
    F("delay_time_ms", "int", "DELAY_TIME_MS"),
))
