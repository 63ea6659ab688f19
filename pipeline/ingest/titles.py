"""Display titles derived from abstracts, for inputs that have none (such as plain text files).

A derived title names the paper's contribution when the abstract names one ("We present nnTrace,
a differential testing system for ..." gives "nnTrace: differential testing system for ..."),
else the object of its "we propose a ..." sentence, else its shortened first sentence. Titles are
at most ``max_words`` words (plus the name), cut at a word boundary with "…", with no trailing
period.

Short inline formulas are kept as plain text ("evaluation on $\\mathcal{D}$ is ..." gives
"Evaluation on D is ..."): ``clean_text`` removes all math, which is right for the model but
leaves a hole in a sentence that a title would show.
"""

from __future__ import annotations

import re

from pipeline.ingest.clean import clean_text


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


_ABBREVIATIONS = _word_set(
    "e.g i.e etc al vs cf fig figs eq eqs sec resp approx dr mr ms prof no nos st ref refs w.r.t"
)
# A sentence ends at . ! or ? (maybe closed by a quote or bracket) before a word, digit or quote
# (names may start in lower case: "... training. nnTrace aligns ...").
_SENTENCE_END = re.compile(r"[.!?][\"'”’)\]]*\s+(?=[A-Za-z0-9\"'“(\[])")

_SUBJECT = (
    r"(?:\b[Ww]e(?:\s+(?:also|then|further|first|hereby|now|here|therefore|thus|instead|thereby))?"
    r"(?:\s+have)?|\b[Tt]his\s+(?:paper|work|article|study|report|note|submission))"
)
_VERB = (
    r"(?:present|propose|introduce|design|develop|build|release|describe|implement|create|contribute"
    r"|construct|curate|offer|put\s+forward)(?:s|d|ed)?"
    r"(?:\s+and\s+(?:implement|evaluate|release|validate|open-source|analy[sz]e|test|deploy|study)(?:s|d|ed)?)?"
)
# "We present NAME (ABBR), a/an/the DESCRIPTION" or "We present NAME, which/that DESCRIPTION".
_NAMED = re.compile(
    _SUBJECT + r"\s+" + _VERB + r"\s+(?P<name>[^\s,;:()]+(?:\s+[^\s,;:()]+){0,7}?)\s*"
    r"(?:\((?P<abbr>[^()]{1,40})\)\s*)?,\s+(?P<article>(?:a|an|the|which|that)\s+)?(?P<desc>.+)$"
)
# "We propose a double-loop algorithm, NAME (ABBR), which ..." / "a framework called NAME".
_NAMED_AFTER = re.compile(
    _SUBJECT + r"\s+" + _VERB + r"\s+(?:a|an)\s+(?P<desc>[^,()]{3,80}?)"
    r"(?:,\s+(?:(?:called|named|dubbed|termed|coined)\s+)?|\s+(?:called|named|dubbed|termed|coined)\s+)"
    r"(?P<name>[A-Z][^\s,;:()]*(?:\s+[^\s,;:()]+){0,9}?)\s*"
    r"(?:\((?P<abbr>[^()]{1,40})\)\s*)?(?:,?\s*(?:which|that)\s+(?P<clause>[^.;]+)|[,;.]|$)"
)
_GENERIC = _word_set(
    "framework method approach algorithm model system technique strategy tool paradigm scheme "
    "architecture procedure pipeline benchmark dataset library metric loss objective"
)
# Sentences opening with a subordinate clause: the title is the main clause after the comma.
_OPENER = re.compile(
    r"^(?:as|when|while|whereas|although|though|despite|since|because|if|to|in|for|with|given|unlike"
    r"|motivated|inspired|recently|however|moreover|traditionally|typically|currently|nowadays|today"
    r"|building|following|by|after|before|under|among|beyond|compared|thanks|due)\b[^,]{0,120},\s+",
    re.IGNORECASE,
)
# "We propose a/an DESCRIPTION" (no name).
_OBJECT = re.compile(_SUBJECT + r"\s+" + _VERB + r"\s+(?:a|an)\s+(?P<desc>.+)$")
_CONTEXT_WORDS = re.compile(r"\b(?:this|these|those|such|it|its|them|above|aforementioned)\b", re.IGNORECASE)
_AND_VERB = re.compile(
    r"\s+and\s+(?:then\s+)?(?:verify|show|demonstrate|prove|evaluate|apply|analy[sz]e|derive|provide"
    r"|establish|use|combine|study|test|validate|compare|discuss|illustrate|report|present|introduce"
    r"|propose|release|conduct|perform|develop|obtain|extend|explore|investigate|find|observe|design"
    r"|implement|give|characteri[sz]e|identify|leverage|train|instantiate)\b.*$"
)
_DO_VERB = re.compile(r"^(?:performs|conducts|does|carries\s+out)\s+")

_NAME_CONNECTORS = _word_set("of for and with to in on via by from under the a an as at or")
_NOT_NAMES = _word_set(
    "a an the our this these those that such it its their two three four several many multiple "
    "some various new novel first simple efficient general generic effective further additional "
    "both each an extensive theoretical empirical"
)
_HYPE = re.compile(
    r"^(?:(?:and|yet|but)\s+)?(?:(?:first|novel|new|simple|effective|efficient|principled|powerful"
    r"|systematic|versatile|conceptually|innovative|elegant|flexible|scalable|kind\s+of|type\s+of)"
    r"(?:,\s*|\s+)(?:(?:and|yet|but)\s+)?)+",
    re.IGNORECASE,
)
_PERIOD_IN_QUOTE = re.compile(r"[.,;:]+([\"'”’]+)$")
_LEADING_ARTICLE = re.compile(r"^(?:a|an|the)\s+", re.IGNORECASE)
_PARENTHETICAL = re.compile(r"\s*\([^()]*\)")
_HARD_STOP = re.compile(r"\s*(?:[:;]|\s[-–—]\s|—|--)\s*")
_CLAUSE_COMMA = re.compile(
    r",\s+(?=(?:which|where|that|and|or|but|while|whereas|to|by|with|using|leveraging|thereby|so|as"
    r"|including|i\.e\.|e\.g\.|based|through|via|in|for|on|whose|who|we|it|this|its|\w+ing)\b)"
)
_RELATIVE = re.compile(r"\s+(?:that|which|where|whose|who)\s+")
_TRAILING_STOPWORDS = _word_set(
    "of the a an and or for to in on with by from at as via into over under its their our this "
    "that these which is are was be whether than between"
)
_BOILERPLATE = re.compile(
    r"^(?:(?:in|within)\s+this\s+(?:paper|work|study|article|note|report)\s*,?\s*|here\s*,?\s*)?"
    r"(?:(?:we|this\s+(?:paper|work|study|article))\s+"
    r"(?:(?:first|also|further)\s+)?(?:study|studies|consider|considers|investigate|investigates|address"
    r"|addresses|examine|examines|explore|explores|analy[sz]e|analy[sz]es|revisit|revisits|tackle"
    r"|tackles|focus\s+on|focuses\s+on|propose|proposes|present|presents|introduce|introduces"
    r"|describe|describes|develop|develops|view|views|(?:argue|argues|show|shows|find|finds|observe"
    r"|observes|demonstrate|demonstrates|prove|proves|posit|posits|hypothesi[sz]e|hypothesi[sz]es)\s+that)\s+)?"
    r"(?:(?:the|a)\s+(?:problem|task|question|setting|challenge)\s+of\s+)?",
    re.IGNORECASE,
)


# Inline math ($...$ or \\(...\\)), not $$...$$ display math nor an escaped dollar.
_INLINE_MATH = re.compile(r"(?<![\\$])\$(?!\$)([^$]{1,80}?)(?<!\\)\$(?!\$)|\\\((.{1,80}?)\\\)")
_MATH_FONT = re.compile(
    r"\\(?:math(?:cal|bf|rm|bb|it|sf|tt|frak|scr)|text(?:tt|bf|it|rm|sf)?|operatorname|boldsymbol|bm)\s*\{([^{}]*)\}"
)
_MATH_SYMBOLS = {
    **dict(
        zip(
            "alpha beta gamma delta epsilon varepsilon zeta eta theta kappa lambda mu nu xi pi rho sigma tau phi"
            " varphi chi psi omega Gamma Delta Theta Lambda Pi Sigma Phi Psi Omega".split(),
            "αβγδεεζηθκλμνξπρστφφχψωΓΔΘΛΠΣΦΨΩ",
            strict=True,
        )
    ),
    "ell": "ℓ", "infty": "∞", "log": "log", "exp": "exp", "times": "×", "cdot": "·", "leq": "≤", "le": "≤",
    "geq": "≥", "ge": "≥", "approx": "≈", "neq": "≠", "in": "∈", "to": "→", "sim": "~", ",": " ", ";": " ",
}  # fmt: skip
_MATH_COMMAND = re.compile(r"\\([A-Za-z]+|[,;])")
#: A formula is kept in a title when its plain form is at most this long (longer ones are dropped).
_MAX_PLAIN_MATH = 24


def _plain_formula(m: re.Match) -> str:
    body = m.group(1) if m.group(1) is not None else m.group(2)
    if body != body.strip():  # "$5 and $6": two prices, not a formula
        return m.group(0)
    for _ in range(3):
        body = _MATH_FONT.sub(r"\1", body)
    body = _MATH_COMMAND.sub(lambda c: _MATH_SYMBOLS.get(c.group(1), c.group(0)), body)
    body = " ".join(body.split())
    if not body or len(body) > _MAX_PLAIN_MATH or len(body.split()) > 3 or any(c in body for c in "\\{}$"):
        return m.group(0)  # not a short plain formula: clean_text removes it
    return body


def plain_math(text: str) -> str:
    """``text`` with each short inline formula written as plain text (``$\\mathcal{D}$`` -> ``D``,
    ``$O(\\log T)$`` -> ``O(log T)``, ``$\\epsilon$`` -> ``ε``); other math is left as it is."""
    if "$" not in text and "\\(" not in text:
        return text
    return _INLINE_MATH.sub(_plain_formula, text)


def _capitalise(text: str) -> str:
    # A Latin first letter only: "ε-greedy" must not become "Ε-greedy" (another symbol).
    return text[:1].upper() + text[1:] if text[:1].isascii() else text


def _sentences(text: str) -> list[str]:
    out: list[str] = []
    start = 0
    for m in _SENTENCE_END.finditer(text):
        before = text[start : m.start() + 1].rsplit(None, 1)
        last = before[-1].rstrip(".").lower() if before else ""
        # "et al. (2020)", "e.g. Adam", "A. Smith": not sentence ends.
        if last in _ABBREVIATIONS or (len(last) == 1 and last.isalpha()):
            continue
        out.append(text[start : m.end()].strip())
        start = m.end()
    out.append(text[start:].strip())
    return [s for s in out if s]


def _words(text: str) -> list[str]:
    return text.split()


def _trim_end(words: list[str]) -> list[str]:
    # Drop dangling function words and suspended hyphens ("human- and machine-made" cut after "human-").
    while len(words) > 1 and (words[-1].lower().strip(",;:") in _TRAILING_STOPWORDS or words[-1].endswith("-")):
        words = words[:-1]
    return words


def _fit(text: str, max_words: int) -> str:
    """Cut ``text`` to ``max_words`` words at a word boundary, with "…" when something was cut."""
    text = _PERIOD_IN_QUOTE.sub(r"\1", text)
    words = _words(text)
    if len(words) <= max_words:
        return text.rstrip(" .,;:")
    kept = _trim_end(words[:max_words])
    return " ".join(kept).rstrip(" .,;:") + "…"


def _describe(desc: str, max_words: int, *, min_words: int = 1) -> str:
    """Shorten an appositive description to a title phrase ("a novel X that ..." -> "X ...")."""
    desc = _PARENTHETICAL.sub("", desc).strip()
    for _ in range(2):
        desc = _HYPE.sub("", _LEADING_ARTICLE.sub("", desc))
    desc = _HARD_STOP.split(desc, maxsplit=1)[0]
    desc = _CLAUSE_COMMA.split(desc, maxsplit=1)[0]
    desc = _AND_VERB.sub("", desc)
    relative = _RELATIVE.search(desc)
    if relative:
        # "action that permits X, corrects Y, and ..." -> "action that permits X"
        desc = desc[: relative.end()] + desc[relative.end() :].split(",", 1)[0]
    desc = desc.strip().rstrip(".!?")
    if len(_words(desc)) > max_words:
        # Prefer the noun phrase before a relative clause: "system that pioneers ..." -> "system".
        head = _RELATIVE.split(desc, maxsplit=1)[0]
        if len(_words(head)) >= 3:
            desc = head
    words = _trim_end(_words(desc))
    if len(words) < min_words:
        return ""
    return _fit(" ".join(words), max_words)


def _valid_name(name: str, article: str) -> str | None:
    words = name.split()
    if words[0] == "the" and len(words) > 1:
        words = words[1:]
    first = words[0].lower()
    if first in _NOT_NAMES or not any(c.isalpha() for c in words[0]):
        return None
    capitalised = [w for w in words if w.lower() not in _NAME_CONNECTORS]
    if not capitalised or words[-1].lower() in _NAME_CONNECTORS:
        return None
    if all(any(c.isupper() for c in w) for w in capitalised):
        return " ".join(words)
    # A lower-case name ("haphazard", "strategic deferral") only as "NAME, a/an/the ...". A single
    # token is kept as written (a package name); a phrase starts with a capital like a title.
    if len(words) == 1 and article.strip() in {"a", "an", "the"}:
        return words[0]
    if len(words) <= 3 and article.strip() in {"a", "an", "the"}:
        return " ".join(words)[0].upper() + " ".join(words)[1:]
    return None


def _named_title(sentences: list[str], max_words: int) -> str | None:
    for sentence in sentences:
        m = _NAMED.search(sentence)
        if not m:
            continue
        article = m.group("article") or ""
        name = _valid_name(m.group("name"), article)
        if name is None:
            continue
        desc = m.group("desc")
        if article.strip() in {"which", "that"}:
            # "NAME, which performs denoising at X and ..." -> "NAME: denoising at X"
            desc = _DO_VERB.sub("", desc.split(" and ", 1)[0])
        desc = _describe(desc, max_words, min_words=1)
        if not desc:
            continue
        return f"{name}: {desc}"
    for sentence in sentences:
        m = _NAMED_AFTER.search(sentence)
        if not m or m.group("name").split()[0].lower() in _NOT_NAMES:
            continue
        name = _valid_name(m.group("name"), "")
        if name is None:
            continue
        desc = _describe(m.group("desc"), max_words, min_words=1)
        if desc in _GENERIC and m.group("clause"):
            # "a novel framework, FedSaC, which balances X" -> "FedSaC: framework that balances X"
            desc = _describe(f"{desc} that {m.group('clause')}", max_words, min_words=1)
        if desc and desc not in _GENERIC:
            return f"{name}: {desc}"
        if len(name.split()) >= 3:
            return name
    return None


def _object_title(sentences: list[str], max_words: int) -> str | None:
    for sentence in sentences:
        m = _OBJECT.search(sentence)
        if not m:
            continue
        desc = _describe(m.group("desc"), max_words, min_words=4)
        if desc and desc.split()[0].lower() not in _NOT_NAMES and not _CONTEXT_WORDS.search(desc):
            return _capitalise(desc)
    return None


def _first_sentence_title(sentences: list[str], max_words: int) -> str:
    sentence = sentences[0].rstrip(".!?")
    opener = _OPENER.match(sentence)
    if opener and len(_words(sentence[opener.end() :])) >= 4:
        sentence = sentence[opener.end() :]
    short = _BOILERPLATE.sub("", sentence, count=1)
    if len(_words(short)) >= 3:
        sentence = short
    if len(_words(sentence)) > max_words:
        sentence = _PARENTHETICAL.sub("", sentence)
    if len(_words(sentence)) > max_words:
        # Stop at the first clause boundary that leaves a phrase of five words or more.
        for m in re.finditer(r"[,;:]\s", sentence):
            if len(_words(sentence[: m.start()])) >= 5:
                sentence = sentence[: m.start()]
                break
    title = _fit(sentence.strip(), max_words)
    return _capitalise(title)


def derive_title(abstract: str, *, max_words: int = 12, clean: str | None = None) -> str:
    """A short display title derived from an abstract.

    Args:
        abstract: the abstract as given (short formulas become plain text, then LaTeX, HTML and
            URLs are removed).
        max_words: longest title in words, not counting a named contribution's name.
        clean: ``clean_text(abstract)`` when the caller has it already; used as it is unless the
            abstract has a formula to keep (saves cleaning it twice).

    Returns:
        "NAME: description" when the abstract introduces a named system, method or benchmark;
        else the object of its first "we propose a ..." sentence; else its first sentence without
        boilerplate such as "In this paper, we". No trailing period; "…" marks a cut. Empty
        only for an abstract with no text.
    """
    if clean is None:
        clean = clean_text(abstract)
    if not clean:  # nothing but markup ("$x$"): no title
        return ""
    plain = plain_math(abstract)
    if plain != abstract:
        clean = clean_text(plain)
    return title_from_clean_text(clean, max_words=max_words)


def title_from_clean_text(text: str, *, max_words: int = 12) -> str:
    """``derive_title`` for an abstract already passed through ``clean_text`` (saves cleaning it twice)."""
    if not text:
        return ""
    sentences = _sentences(text)
    return (
        _named_title(sentences, max_words)
        or _object_title(sentences, max_words)
        or _first_sentence_title(sentences, max_words)
    )
