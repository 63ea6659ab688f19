"""The offline export: one self-contained HTML file with the map, search and papers (and what changed)."""
