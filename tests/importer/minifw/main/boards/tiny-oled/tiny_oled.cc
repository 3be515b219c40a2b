#include "wifi_board.h"
class TinyOled : public WifiBoard {};
