"""The build runner: stages in order, the stage cache, the writer, incremental adds, the stability job."""
