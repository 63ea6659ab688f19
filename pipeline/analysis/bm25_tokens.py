"""The keyword index's tokens of one text, found faster than bm25s's pattern finds them.

The index counts bm25s's tokens (``bm25.tokenize``): runs of two or more word characters (Python's
``\\w``) of the lower-cased text, stop words dropped. Over ASCII text ``\\w`` is exactly the letters,
digits and underscore, so there the runs are what is left between the other characters once a
byte table has turned each of them into a space: ``bytes.translate`` and ``str.split`` find them
in C, about a third faster than the pattern (which the rest of the text still uses). That split
also yields the runs of one character, which the pattern never finds: :data:`SINGLE` holds every
one of them, for the caller to drop with the stop words. Building the index's counts
(``bm25.count_tokens``) took a third less time with this on the 100,000-paper benchmark texts,
the same counts (BENCHMARKS.md; tests/test_bm25.py compares them with bm25s's on any text).
"""

from __future__ import annotations

import re

#: Each byte below 128 that is a word character kept, every other byte a space.
_WORD_BYTES = bytes(b if b < 128 and (chr(b).isalnum() or chr(b) == "_") else 32 for b in range(256))

#: Every run of one word character the ASCII split can yield (the pattern needs two).
SINGLE = frozenset(chr(b) for b in range(128) if chr(b).isalnum() or chr(b) == "_")


def words(lowered: str, pattern: re.Pattern) -> list[str]:
    """The runs of word characters of a lower-cased text: ``pattern.findall(lowered)`` (the
    tokeniser's pattern, ``\\b\\w\\w+\\b``), but where the text is ASCII also its runs of one
    character (:data:`SINGLE`)."""
    if lowered.isascii():
        return lowered.encode("ascii").translate(_WORD_BYTES).decode("ascii").split()
    return pattern.findall(lowered)
