"""What the pages compute and show, without drawing: search, analysis tables, figures, comparisons, the map's data, jobs."""
