"""Developer and CI tools that are not part of the installed package (``python -m tools.<name>``)."""
