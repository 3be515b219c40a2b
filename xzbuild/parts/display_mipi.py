"""MIPI-DSI panels (ESP32-P4): lanes, bit rate, PHY power and video timings."""

from xzbuild.parts.base import F, Part

PART = Part("display_mipi", "MIPI-DSI link and timings.", (
    F("lane_num", "int", "LCD_MIPI_DSI_LANE_NUM", "DISPLAY_MIPI_LANE_NUM", "SCREEN_DATA_LANE_NUM"),
    F("lane_bitrate_mbps", "int", "LCD_MIPI_DSI_LANE_BITRATE_MBPS", "DISPLAY_MIPI_LANE_BITRATE_MBPS",
      "SCREEN_LANE_BIT_RATE_MBPS"),
    F("phy_ldo_chan", "int", "MIPI_DSI_PHY_PWR_LDO_CHAN"),
    F("phy_ldo_voltage_mv", "int", "MIPI_DSI_PHY_PWR_LDO_VOLTAGE_MV"),
    F("pixel_clock_mhz", "int", "DISPLAY_PIXEL_CLOCK_MHZ", "SCREEN_MIPI_DSI_DPI_CLK_MHZ"),
    F("hsync_pw", "int", "DISPLAY_HSYNC_PW", "SCREEN_MIPI_DSI_HSYNC"),
    F("hsync_bp", "int", "DISPLAY_HSYNC_BP", "SCREEN_MIPI_DSI_HBP"),
    F("hsync_fp", "int", "DISPLAY_HSYNC_FP", "SCREEN_MIPI_DSI_HFP"),
    F("vsync_pw", "int", "DISPLAY_VSYNC_PW", "SCREEN_MIPI_DSI_VSYNC"),
    F("vsync_bp", "int", "DISPLAY_VSYNC_BP", "SCREEN_MIPI_DSI_VBP"),
    F("vsync_fp", "int", "DISPLAY_VSYNC_FP", "SCREEN_MIPI_DSI_VFP"),
))
