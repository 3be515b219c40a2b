"""E-paper panels on SPI."""

from xzbuild.parts.base import F, Part

PART = Part("epaper", "E-paper panel SPI and control pins.", (
    F("spi_num", "ident", "EPD_SPI_NUM"),
    F("mosi", "gpio", "EPD_MOSI_PIN", bus="spi_mosi"),
    F("sck", "gpio", "EPD_SCK_PIN", bus="spi_sclk"),
    F("cs", "gpio", "EPD_CS_PIN"),
    F("dc", "gpio", "EPD_DC_PIN"),
    F("reset", "gpio", "EPD_RST_PIN"),
    F("busy", "gpio", "EPD_BUSY_PIN"),
    F("power", "gpio", "EPD_PWR_PIN"),
))
