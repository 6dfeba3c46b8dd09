"""Storage I/O of the server: warehouse directories and the RFC-36 storage mirror."""
