"""Sentence embeddings: encoders (ONNX int8, torch), the per-text store, and Ray for large corpora."""
