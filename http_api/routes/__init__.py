"""One module per resource, each exporting `OPERATIONS`."""
