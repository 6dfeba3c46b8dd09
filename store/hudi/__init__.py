"""Hudi services (RFC-36 timeline and snapshot services): instants and their state machine, commits
and conflict checks, file slices, cleaning, import of existing tables."""
