"""Parallel display buses: RGB (DE/VSYNC/HSYNC + 16 data lines) and Intel 8080 (WR/RD + 8 data lines)."""

from xzbuild.parts.base import F, Part, family

PART = Part("display_parallel", "RGB and i80 parallel panel pins.", (
    F("pclk", "gpio", "BSP_LCD_PCLK", "LCD_RGB_PCLK"),
    F("de", "gpio", "BSP_LCD_DE", "LCD_RGB_DE"),
    F("vsync", "gpio", "BSP_LCD_VSYNC", "LCD_RGB_VSYNC"),
    F("hsync", "gpio", "BSP_LCD_HSYNC", "LCD_RGB_HSYNC"),
    F("disp", "gpio", "BSP_LCD_DISP", "LCD_RGB_DISP"),
    F("data_width", "int", "BSP_RGB_DATA_WIDTH"),
    F("big_endian", "int", "BSP_LCD_BIGENDIAN"),
    *family("data{}", "gpio", 16, "BSP_LCD_DATA{}", "LCD_RGB_DATA{}"),
    F("wr", "gpio", "LCD_PIN_WR", "LCD_NUM_WR"),
    F("rd", "gpio", "LCD_PIN_RD", "LCD_NUM_RD"),
    *family("d{}", "gpio", 8, "LCD_PIN_D{}", "GPIO_LCD_D{}"),
))
