"""Storage I/O of the server: warehouse directories and the boundary of what it may delete or move
(the RFC-36 storage mirror of Hudi tables lives in store/hudi/storage_mirror.py)."""
