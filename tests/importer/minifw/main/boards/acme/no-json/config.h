#pragma once
#define BOOT_BUTTON_GPIO GPIO_NUM_0
