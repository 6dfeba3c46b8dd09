"""Hudi's on-storage format, shared by the store, the CLI and the pipeline: instants, file names and
slices, commit metadata, table config, the timeline and file listing as storage holds them."""
