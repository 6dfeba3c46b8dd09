"""CLI commands that orchestrate the store through the Thrift client (import, validate, repair, views)."""
