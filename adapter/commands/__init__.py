"""The CLI's table commands (import-hudi, validate, repair, stats, list-partitions, list-files,
migrate): they talk to a server only through the client (client/)."""
