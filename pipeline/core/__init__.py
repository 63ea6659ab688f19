"""What every stage shares: the artifact layout (schema), reading and writing builds, settings, progress, errors."""
