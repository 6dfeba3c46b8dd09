"""The read-only web console on the worker's HTTP port (`serve --metrics-port`): databases, tables,
partitions (paged), Hudi timelines on a time axis, file slices, commit sizes and the server's
metrics, rendered on the server (HTML and SVG, no scripts). It reads only through the worker's
store services, as the Thrift handlers do."""
