"""Virtual ESP boards: ROM serial loader, reset circuit, boot emulation and RFC2217 transport."""
