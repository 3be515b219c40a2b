#include "lcd_display.h"
static auto* display = new MipiLcdDisplay();
static auto* camera = new Esp32Camera();
