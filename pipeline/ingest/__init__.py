"""Input files -> papers: readers per format, cleaning, display titles, row checks and ids."""
