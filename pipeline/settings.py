"""Settings from a TOML config file and command-line overrides, into a :class:`BuildConfig`.

A config file mirrors the dataclasses in ``pipeline/config.py``::

    [ingest]
    min_words = 10
    [ingest.columns]
    abstract = "paper_abstract"
    [embed]
    backend = "torch"
    [cluster]
    min_cluster_size = 25

Unknown sections or keys are errors that name the file and list the valid keys.
"""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path
from typing import Any

from pipeline.config import BuildConfig
from pipeline.errors import PipelineError


def _apply(obj, values: dict[str, Any], where: str):
    fields = {f.name: f for f in dataclasses.fields(obj)}
    changes = {}
    for key, value in values.items():
        if key not in fields:
            raise PipelineError(f"{where}: unknown setting {key!r}; valid: {', '.join(sorted(fields))}.")
        current = getattr(obj, key)
        if dataclasses.is_dataclass(current):
            if not isinstance(value, dict):
                raise PipelineError(f"{where}.{key}: expected a table of settings, got {value!r}.")
            changes[key] = _apply(current, value, f"{where}.{key}")
        elif isinstance(current, tuple):
            changes[key] = tuple(value)
        else:
            changes[key] = value
    return dataclasses.replace(obj, **changes)


def load_config(path: Path | None, base: BuildConfig = BuildConfig()) -> BuildConfig:
    """Read a TOML config file over ``base``."""
    if path is None:
        return base
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PipelineError(f"config file {path} does not exist.") from None
    except tomllib.TOMLDecodeError as exc:
        raise PipelineError(f"config file {path} is not valid TOML: {exc}.") from None
    return _apply(base, data, str(path))


def with_overrides(config: BuildConfig, overrides: dict[str, dict[str, Any]]) -> BuildConfig:
    """Apply ``{"section": {"key": value}}`` overrides, skipping values that are ``None``."""
    cleaned = {}
    for section, values in overrides.items():
        kept = {k: v for k, v in values.items() if v is not None}
        if kept:
            cleaned[section] = kept
    columns = cleaned.get("ingest", {}).pop("columns", None)
    config = _apply(config, cleaned, "option")
    if columns:
        merged = dataclasses.replace(config.ingest.columns, **{k: v for k, v in columns.items() if v})
        config = dataclasses.replace(config, ingest=dataclasses.replace(config.ingest, columns=merged))
    return config
