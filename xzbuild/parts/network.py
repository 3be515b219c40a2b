"""Cellular modules (ML307, NT26, generic 4G) and UART links."""

from xzbuild.parts.base import F, Part

PART = Part("network", "4G module UART pins.", (
    F("ml307_tx", "gpio", "ML307_TX_PIN"),
    F("ml307_rx", "gpio", "ML307_RX_PIN"),
    F("ml307_dtr", "gpio", "ML307_DTR_PIN"),
    F("nt26_tx", "gpio", "NT26_TX_PIN"),
    F("nt26_rx", "gpio", "NT26_RX_PIN"),
    F("nt26_dtr", "gpio", "NT26_DTR_PIN"),
    F("nt26_ri", "gpio", "NT26_RI_PIN"),
    F("modem_tx", "gpio", "Module_4G_TX_PIN"),
    F("modem_rx", "gpio", "Module_4G_RX_PIN"),
    F("uart1_tx_1", "gpio", "UART1_TX_1"),
    F("uart1_rx_1", "gpio", "UART1_RX_1"),
    F("uart1_tx_2", "gpio", "UART1_TX_2"),
    F("uart1_rx_2", "gpio", "UART1_RX_2"),
    F("echo_uart_port", "ident", "ECHO_UART_PORT_NUM"),
    F("echo_uart_baud", "int", "ECHO_UART_BAUD_RATE"),
    F("echo_uart_tx", "gpio", "UART_ECHO_TXD"),
    F("echo_uart_rx", "gpio", "UART_ECHO_RXD"),
    F("echo_uart_rts", "int", "UART_ECHO_RTS"),
    F("echo_uart_cts", "int", "UART_ECHO_CTS"),
    F("uart_buffer_size", "int", "BUF_SIZE"),
))
