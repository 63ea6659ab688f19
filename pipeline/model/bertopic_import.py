"""Import BERTopic without the optional parts that drag in sentence-transformers and transformers.

``import bertopic`` eagerly imports its multimodal embedding backend and its transformers-based
representations (text generation, zero-shot classification, visual), and with them
sentence-transformers and transformers: seconds and hundreds of MB in every process that
fits, loads or scores a model (BENCHMARKS.md, "Warm rebuild against vanilla BERTopic"), although
the pipeline hands BERTopic its own embeddings (``FunctionEmbedder``) and uses none of them.
BERTopic supports installs without these packages: each optional part's import is caught and a
placeholder stands in (``bertopic.backend.__init__``, ``bertopic.representation.__init__``).
:func:`prepare` makes that happen for those parts alone. Nothing the pipeline uses changes: the
c-TF-IDF, KeyBERTInspired and MMR are imported as before, and sentence-transformers still loads
where it is used (the torch embedder, ``pipeline.embed.encoders``).

Call :func:`prepare` before the first ``import bertopic`` of a process (every module here that
imports BERTopic does). Where BERTopic, sentence-transformers or a skipped part is imported
already, it does nothing: nothing would be saved.
"""

from __future__ import annotations

import sys

#: BERTopic's optional modules that ``import bertopic`` loads and that import sentence-transformers
#: or transformers. (torch itself is still imported, by BERTopic's save module; holding it out the
#: same way breaks scipy, which takes a ``None`` in ``sys.modules["torch"]`` for the module.)
SKIPPED = (
    "bertopic.backend._multimodal",
    "bertopic.representation._textgeneration",
    "bertopic.representation._zeroshot",
    "bertopic.representation._visual",
)


def prepare() -> bool:
    """Import BERTopic without :data:`SKIPPED`, unless BERTopic or one of them is imported already.

    Each skipped module is held out only while BERTopic is imported: an entry of None in
    ``sys.modules`` makes ``import`` raise ModuleNotFoundError, which BERTopic catches (a
    placeholder stands in for the part); the entries are then removed, so any later import of
    sentence-transformers or of a skipped part in the process works as usual. True when BERTopic was imported
    this way.
    """
    if "bertopic" in sys.modules or any(name in sys.modules for name in (*SKIPPED, "sentence_transformers")):
        return False
    for name in SKIPPED:
        sys.modules[name] = None
    try:
        import bertopic  # noqa: F401
        import bertopic.representation  # noqa: F401
    finally:
        for name in SKIPPED:
            if sys.modules.get(name, False) is None:
                del sys.modules[name]
    return True
