"""Formats that the pipeline writes and the app reads, below both (README, "Where things are").

``blobs`` (the map component's binary containers: points, mask, rows), ``palette`` (one colour per
topic in the app, its charts and the offline export) and ``ids`` (the short paper ids of reading
lists and links). They import nothing else of this project, so ``pipeline.export.export`` and
``pipeline.analysis.bm25`` use them without importing the app, and the app without a circle.
"""
