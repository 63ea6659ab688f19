"""Settings from a TOML config file, command-line overrides and manifests, into a :class:`BuildConfig`.

A config file mirrors the dataclasses in ``pipeline/core/config.py``::

    [ingest]
    min_words = 10
    [ingest.columns]
    abstract = "paper_abstract"
    [embed]
    backend = "torch"
    [cluster]
    min_cluster_size = 25

Every value is validated as it is loaded, against the table of allowed values next to the
dataclasses (``pipeline.core.config``): an unknown section or key, a wrong type, a value out of range or
an unknown choice raises a :class:`~pipeline.core.config.SettingsError` naming where the value came from
(the file, ``command line`` or the manifest), the key, the value and what is allowed. Nothing is
read or embedded before that.
"""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path
from typing import Any

from pipeline.core.config import SECTIONS, SPEED_ONLY, BuildConfig, SettingsError
from pipeline.core.errors import PipelineError
from pipeline.core.manifest import Manifest


def _apply(obj, values: dict[str, Any], where: str, path: str = ""):
    """``obj`` with ``values`` applied; every key checked, every value validated."""
    fields = {f.name: f for f in dataclasses.fields(obj)}
    changes = {}
    for key, value in values.items():
        full = f"{path}{key}"
        if key not in fields:
            valid = ", ".join(f"{path}{k}" for k in sorted(fields))
            raise PipelineError(f"{where}: unknown setting {full!r}; valid settings here: {valid}.")
        current = getattr(obj, key)
        if dataclasses.is_dataclass(current):
            if not isinstance(value, dict):
                raise PipelineError(f"{where}: {full} must be a table of settings ([{full}]), got {value!r}.")
            changes[key] = _apply(current, value, where, f"{full}.")
        else:
            changes[key] = value
    try:
        return dataclasses.replace(obj, **changes)
    except SettingsError as exc:
        raise exc.located(where) from None


def load_config(path: Path | None, base: BuildConfig = BuildConfig()) -> BuildConfig:
    """Read a TOML config file over ``base``.

    Raises:
        PipelineError: the file is missing or not TOML, or a setting is unknown or not allowed.
    """
    if path is None:
        return base
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PipelineError(f"config file {path} does not exist.") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise PipelineError(f"config file {path} cannot be read: {exc}.") from None
    except tomllib.TOMLDecodeError as exc:
        raise PipelineError(f"config file {path} is not valid TOML: {exc}.") from None
    return _apply(base, data, str(path))


def with_overrides(config: BuildConfig, overrides: dict[str, dict[str, Any]]) -> BuildConfig:
    """Apply ``{"section": {"key": value}}`` overrides (command-line flags), skipping ``None`` values.

    Raises:
        SettingsError: a value is not allowed (the message says ``command line``).
    """
    cleaned = {}
    for section, values in overrides.items():
        kept = {k: v for k, v in values.items() if v is not None}
        if section == "ingest" and isinstance(kept.get("columns"), dict):
            kept["columns"] = {k: v for k, v in kept["columns"].items() if v}
            if not kept["columns"]:
                del kept["columns"]
        if kept:
            cleaned[section] = kept
    return _apply(config, cleaned, "command line")


def config_from_manifest(manifest: Manifest, source: str) -> BuildConfig:
    """The settings a build was made with (its manifest's ``params``), validated like a config file.

    Args:
        manifest: a build's manifest (``pipeline.core.artifacts.read_manifest``).
        source: where it came from, for messages (e.g. the manifest's path).

    Raises:
        PipelineError: a section or key is unknown, or a value is not allowed (a manifest edited by
            hand, or one that names a setting no user may choose). The message says to rebuild.
    """
    params = manifest.params
    if not isinstance(params, dict):
        raise PipelineError(f"{source}: the manifest has no settings ('params'); rebuild the corpus.")
    unknown = sorted(set(params) - set(SECTIONS))
    if unknown:
        raise PipelineError(
            f"{source}: unknown settings section(s) {', '.join(unknown)}; valid: {', '.join(SECTIONS)}. "
            "Rebuild the corpus (with --refit)."
        )
    try:
        return _apply(BuildConfig(), params, source)
    except PipelineError as exc:
        raise PipelineError(f"{exc} The manifest was edited or is damaged: rebuild the corpus with --refit.") from None


def result_settings(config: BuildConfig) -> dict:
    """The settings that decide a build's result, as plain JSON data: everything but
    :data:`~pipeline.core.config.SPEED_ONLY` and the model's path (its content is hashed instead)."""
    import json

    data = json.loads(json.dumps(dataclasses.asdict(config), default=list))
    for section, key in SPEED_ONLY:
        data[section].pop(key, None)
    data["embed"].pop("model", None)
    return data
