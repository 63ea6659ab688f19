"""A build's ``manifest.json`` as typed, frozen dataclasses: :class:`Manifest` with its sections.

``pipeline.build.writer.manifest`` assembles the JSON; the build reads it into a :class:`Manifest` and
writes :meth:`Manifest.to_dict` (the same JSON, key order included). Readers use attributes.

Older builds lack keys that later versions write: :meth:`Manifest.from_dict` gives each missing key
the default its readers have always assumed (``0`` counts, empty sections, ``None`` where a reader
falls back to something else), and remembers which keys the file had, in their order, and any keys
this version does not know (e.g. ``synthetic`` of benchmark corpora), so that :meth:`to_dict` gives
back the file's own JSON.

A section whose value is not an object (``null`` in a hand-edited file) reads as an empty section
and is written back as ``{}``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar


@dataclass(frozen=True)
class _Section:
    """What every manifest object shares: reading from a dict and writing it back unchanged.

    ``_keys`` is the order of the keys the source had (empty: every field, in declaration order);
    ``_extra`` holds the keys this version does not know, with their values.
    """

    _keys: tuple[str, ...] = field(default=(), repr=False, compare=False, kw_only=True)
    _extra: dict[str, Any] = field(default_factory=dict, repr=False, compare=False, kw_only=True)

    #: Fields holding a section (its class), or a list of sections (the item class in a 1-tuple).
    SECTIONS: ClassVar[dict[str, Any]] = {}

    @classmethod
    def _names(cls) -> list[str]:
        return [f.name for f in dataclasses.fields(cls) if not f.name.startswith("_")]

    @classmethod
    def from_dict(cls, data: dict | None):
        """Read ``data``; missing keys get the field's default, unknown keys are kept aside."""
        data = data if isinstance(data, dict) else {}
        names = set(cls._names())
        values = {}
        for key, value in data.items():
            if key not in names:
                continue
            kind = cls.SECTIONS.get(key)
            if isinstance(kind, tuple):
                value = [kind[0].from_dict(v) for v in value] if isinstance(value, list) else []
            elif kind is not None:
                value = kind.from_dict(value)
            values[key] = value
        extra = {k: v for k, v in data.items() if k not in names}
        return cls(**values, _keys=tuple(data), _extra=extra)

    def to_dict(self) -> dict:
        """The JSON object: the source's keys in its order (every field for one made in code)."""
        out = {}
        for key in self._keys or self._names():
            if key in self._extra:
                out[key] = self._extra[key]
                continue
            value = getattr(self, key)
            if isinstance(value, _Section):
                value = value.to_dict()
            elif isinstance(value, list) and key in self.SECTIONS:
                value = [v.to_dict() for v in value]
            out[key] = value
        return out


@dataclass(frozen=True)
class Counts(_Section):
    """The ``counts`` section: papers read, kept, skipped and placed, topics, years."""

    read: int = 0
    papers: int = 0
    skipped: int = 0
    changed: int = 0
    skipped_by_reason: dict[str, int] = field(default_factory=dict)
    topics: int = 0
    outlier_share: float = 0.0
    reassigned: int = 0
    placed: int = 0
    #: Papers the topics were fitted on (None in builds before it was recorded: all old papers).
    fitted_papers: int | None = None
    years: list[int] | None = None  # [first, last], None without years
    papers_with_year: int = 0


@dataclass(frozen=True)
class EmbeddingInfo(_Section):
    """The ``embedding`` section: which vectors the build used and how many were computed."""

    model: str | None = None
    model_key: str | None = None  # the embedding store's key (``pipeline.embed.embed_model.model_key``)
    model_fingerprint: str | None = None
    backend: str | None = None
    dim: int | None = None
    computed: int = 0
    cached: int = 0


@dataclass(frozen=True)
class Stage(_Section):
    """One entry of ``stages``: a stage's wall time, peak memory and note."""

    name: str = ""
    seconds: float = 0.0
    peak_rss_mb: float = 0.0
    note: str = ""


@dataclass(frozen=True)
class Manifest(_Section):
    """A build's manifest. ``params``, ``cluster_params``, ``knn`` and ``stability`` stay plain JSON
    objects: ``pipeline.core.settings.config_from_manifest`` validates ``params``; the others are
    passed on whole or shown as they are."""

    SECTIONS: ClassVar[dict[str, Any]] = {"embedding": EmbeddingInfo, "counts": Counts, "stages": (Stage,)}

    schema_version: int | None = None
    name: str | None = None
    build_id: str | None = None
    created_at: str | None = None
    fitted_at: str | None = None  # when the topics were fitted (an incremental build keeps the fit's)
    mode: str | None = None  # "full" or "incremental"
    fingerprint: str | None = None  # ``pipeline.build.build.fingerprint``
    fit_settings: str | None = None  # ``pipeline.build.build.fit_settings_key``
    inputs: list[dict] = field(default_factory=list)  # ``pipeline.ingest.ingest.InputInfo.to_dict`` of each file
    params: dict | None = None  # every setting, by section
    cluster_params: dict = field(default_factory=dict)  # the clustering's resolved parameters
    knn: dict | None = None
    stability: dict | None = None
    embedding: EmbeddingInfo = field(default_factory=EmbeddingInfo)
    counts: Counts = field(default_factory=Counts)
    files: dict[str, dict] = field(default_factory=dict)  # file name -> {"rows": n}
    packages: dict[str, str] = field(default_factory=dict)
    stages: list[Stage] = field(default_factory=list)
    seconds_total: float | None = None
    peak_rss_mb: float | None = None
    synthetic: bool = False  # a made-up corpus (benchmarks): the map says so
