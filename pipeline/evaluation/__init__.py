"""Quality measures and the baselines they are compared with (``python -m pipeline evaluate``)."""
