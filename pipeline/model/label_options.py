"""The labels one topic may take, best first (made by ``pipeline.model.labels.topic_options``,
chosen among by ``pipeline.model.label_choice``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class Option:
    """A label one topic may take: the share of its papers read that use it (NaN when none were
    read) and its rank among the topic's options (higher is better; ``pipeline.model.labels``)."""

    label: str
    coverage: float
    rank: float
    #: the lower bound of its coverage is under ``label_evidence.WEAK_SUPPORT`` (as ``label_support``
    #: reads it)
    weak: bool = False
    #: what the papers' titles added to its rank (``labels.TITLE_WEIGHT``)
    titled: float = 0.0


class TopicOptions(list):
    """A topic's options, best first: those made without any term that names a setting
    (``labels.names_setting``), and on demand (:meth:`plain`) those made of every candidate, as
    before titles were read."""

    def __init__(self, options: list[Option], plain: Callable[[], list[Option]] | None = None):
        super().__init__(options)
        self._plain = plain
        self._plain_options: list[Option] | None = None
        self._on_plain: list[Callable[[list[Option]], None]] = []

    def plain(self) -> list[Option]:
        """The options made of every candidate (computed once; the same as these where no candidate
        names a setting)."""
        if self._plain is None:
            return list(self)
        if self._plain_options is None:
            self._plain_options = self._plain()
            for call in self._on_plain:
                call(self._plain_options)
        return self._plain_options

    def when_plain(self, call: Callable[[list[Option]], None]) -> None:
        """Call ``call`` with the options of :meth:`plain` when they are made (at once if they are)."""
        if self._plain_options is not None:
            call(self._plain_options)
        else:
            self._on_plain.append(call)

    def known(self) -> list[Option]:
        """These options and those of :meth:`plain` where already made."""
        return [*self, *(self._plain_options or [])]
