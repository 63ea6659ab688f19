"""Text cleaning: a display version (the text as given) and a modelling version (markup removed).

``normalize_display`` keeps the text as the user gave it, minus invisible junk, for showing it.
``clean_text`` removes what should never reach the embedding model or become a topic keyword:
LaTeX math and commands, HTML tags and entities, URLs, e-mail addresses and PDF-extraction
artefacts. Both are plain functions over compiled regular expressions, fast enough to run over
tens of thousands of abstracts in a second or two.
"""

from __future__ import annotations

import html
import re

# C0 controls except tab and newline, DEL, C1 controls, zero-width characters and the BOM.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b-\u200d\u2060\ufeff\u00ad]")
_NEWLINES = re.compile(r"\r\n?")

# --- HTML -------------------------------------------------------------------------------------
_SCRIPT = re.compile(r"<(script|style)\b[^>]*>.*?</\1\s*>", re.IGNORECASE | re.DOTALL)
_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.DOTALL)
# A tag needs a name right after "<" and a closing ">" with no other "<" in between, so that
# comparisons such as "p < 0.05" or "a<b" survive.
_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9:-]*(?:\s[^<>]*)?/?>")
_ENTITY = re.compile(r"&(?:#\d+|#[xX][0-9A-Fa-f]+|[A-Za-z][A-Za-z0-9]*);?")

# --- links, addresses and extraction artefacts ---------------------------------------------------
_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_TRAIL = r"[^\s<>\"'(){}\[\].,;:!?]"  # a link ends on a character that is not punctuation
_URL = re.compile(r"(?:https?|ftp)\s*:?\s*//(?:[^\s<>\"]*" + _TRAIL + ")?", re.IGNORECASE)
_ARXIV_URL = re.compile(r"\[?\bthis\s+(?:https?|ftp)\s+URL\b\]?", re.IGNORECASE)
_WWW = re.compile(r"\bwww\.(?:[^\s<>\"]*" + _TRAIL + ")?", re.IGNORECASE)
_TLDS = "com|org|net|io|ai|edu|gov|science|dev|info|me|co|cc|ly|gl|be|tv|app|page|uk|de|fr|cn|jp|ca|au|ch|nl|us|html?|php|pdf"
_DOMAIN = re.compile(
    r"\b[A-Za-z0-9][A-Za-z0-9-]*(?:\.[A-Za-z0-9-]+)*\.(?:" + _TLDS + r")\b(?:/[^\s<>\"]*" + _TRAIL + r"|/)?"
)
_TLD_HINT = re.compile(r"\.(?:" + _TLDS + r")\b")
_CID = re.compile(r"\(cid:\d+\)|\bcid:\d+")
# PDF extraction splits words at line ends ("com- ponents"); "pre- and post-training" stays.
_LINE_BREAK_HYPHEN = re.compile(r"(?<=[a-z])- (?!(?:and|or|nor|to|as|vs|versus|but|with|than|from)\b)(?=[a-z])")
# "available on GitHub" is boilerplate, not a topic.
_CODE_HOST = re.compile(r"\b((?:at|on|in|via|from|through)\s+(?:our\s+|the\s+)?)(?:GitHub|Github|github)\b")

#: Version of the modelling text (:func:`clean_text`), part of a build's fingerprint: a build made
#: with another is not up to date. 2: a one-letter variable joined to a word by a hyphen keeps its
#: letter ("$k$-means" is "k-means", not "means").
CLEAN_VERSION = 2

# --- LaTeX -------------------------------------------------------------------------------------
# Every command pattern below reads "\\+" (a command escaped once or more, as JSON and CSV exports
# double it); a long run of backslashes made each of them scan it again from every backslash
# (40,000 in a row took over a minute). A run is one backslash to all of them, so it is made one first.
_BACKSLASHES = re.compile(r"\\{2,}")
_ESCAPED_DOLLAR = re.compile(r"\\+\$")
_MATH_ENVS = "equation|align|alignat|eqnarray|gather|multline|math|displaymath|split|array|cases|[pbvBV]?matrix"
_MATH_ENV = re.compile(
    r"\\+begin\s*\{(" + _MATH_ENVS + r")\*?\}.{0,3000}?\\+end\s*\{\1\*?\}", re.DOTALL | re.IGNORECASE
)
_NUMBER_MATH = re.compile(r"\$\s*(\d+(?:[.,]\d+)*)\s*\$")  # "$16$ tasks" keeps its number
# A one-letter variable joined to a word by a hyphen keeps its letter: "$k$-means" is "k-means"
# (not "means"), "$n$-dimensional" "n-dimensional", "$k$-th" "k-th" (not a word "th").
_LETTER_MATH = re.compile(r"\$\s*([A-Za-z])\s*\$(?=-[A-Za-z])|\\+\(\s*([A-Za-z])\s*\\+\)(?=-[A-Za-z])")
_DOLLAR_MATH = re.compile(r"\$\$[^$]{0,3000}?\$\$|\$[^$]{1,1500}?\$")
_PAREN_MATH = re.compile(r"\\+\((.{0,3000}?)\\+\)|\\+\[(.{0,3000}?)\\+\]", re.DOTALL)
_DROP_WITH_ARG = re.compile(
    r"\\+(?:cite[a-z]*|ref|eqref|autoref|[cC]ref|label|url|footnote(?:text)?|thanks|includegraphics"
    r"|vspace|hspace|bibliography\w*)\*?\s*(?:\[[^\]]*\]\s*)?\{[^{}]*\}"
)
_HREF = re.compile(r"\\+href\s*\{[^{}]*\}\s*\{([^{}]*)\}")
_MACROS = {
    "eg": "e.g.",
    "ie": "i.e.",
    "etal": "et al.",
    "etc": "etc.",
    "vs": "vs.",
    "wrt": "w.r.t.",
    "cf": "cf.",
}
_MACRO = re.compile(r"\\+(" + "|".join(_MACROS) + r")(?![A-Za-z])\.?")
_ACCENT = re.compile(r"\\+(?:['\"^`~=.]\s*|[uvHckrbdt]\s*(?=\{))\{?([A-Za-z])\}?")
_ESCAPED_CHAR = re.compile(r"\\+([%&_#])")
_COMMAND = re.compile(r"\\+[A-Za-z]+\*?")
_LATEX_LEFTOVER = re.compile(r"[\\{}$]+")

# --- tidying -----------------------------------------------------------------------------------
_EMPHASIS = re.compile(r"(?<![\w*])[*_]+(?=\w)|(?<=\w)[*_]+(?![\w*])")
_EMPTY_BRACKETS = re.compile(r"\(\s*[,;:.]?\s*\)|\[\s*[,;:.]?\s*\]")
_SPACE_BEFORE_PUNCT = re.compile(r" +(?=[,.;:!?)\]])")
_SPACE_AFTER_OPEN = re.compile(r"([(\[]) +")
_DOUBLE_PUNCT = re.compile(r"([,;:])(?: ?[,;:])+")


def normalize_display(text: str) -> str:
    """The display version of a text: as given, minus NUL and control characters.

    Line breaks are normalised to ``\\n`` and kept (paragraphs stay paragraphs); tabs are kept;
    surrounding whitespace is stripped. Nothing else changes: HTML stays literal text (the app
    escapes it), LaTeX stays as written.
    """
    return _CONTROL.sub("", _NEWLINES.sub("\n", text)).strip()


def _unescape(text: str) -> str:
    # Entities may be escaped twice ("&amp;nbsp;"); unescape until nothing changes.
    for _ in range(3):
        if "&" not in text or not _ENTITY.search(text):
            break
        text = html.unescape(text)
    return text


def _strip_html(text: str) -> str:
    if "<" in text:
        text = _SCRIPT.sub(" ", text)
        text = _COMMENT.sub(" ", text)
        text = _TAG.sub(" ", text)
    if "&" in text:
        text = _unescape(text)
        if "<" in text:
            text = _TAG.sub(" ", _SCRIPT.sub(" ", text))
    return text


def _strip_links(text: str) -> str:
    # Each pattern runs only where a cheap test says it can match: most abstracts have no links.
    if "@" in text:
        text = _EMAIL.sub(" ", text)
    if "//" in text:
        text = _URL.sub(" ", text)
    if "URL" in text:
        text = _ARXIV_URL.sub(" ", text)
    if "www." in text or "WWW." in text:
        text = _WWW.sub(" ", text)
    if _TLD_HINT.search(text):
        text = _DOMAIN.sub(" ", text)
    if "cid:" in text:
        text = _CID.sub(" ", text)
    if "- " in text:
        text = _LINE_BREAK_HYPHEN.sub("", text)
    if "ithub" in text or "itHub" in text:
        text = _CODE_HOST.sub(r"\1", text)
    return text


def _strip_latex(text: str) -> str:
    if "\\\\" in text:
        text = _BACKSLASHES.sub(lambda _: "\\", text)
    if "$" in text or "\\(" in text:
        text = _LETTER_MATH.sub(lambda m: m.group(1) or m.group(2), text)
    if "$" in text:
        text = _ESCAPED_DOLLAR.sub(" ", text)
        text = _NUMBER_MATH.sub(r"\1", text)
        text = _DOLLAR_MATH.sub(" ", text)
    if "\\" in text:
        if "begin" in text:
            text = _MATH_ENV.sub(" ", text)
        if "\\(" in text or "\\[" in text:
            text = _PAREN_MATH.sub(" ", text)
        text = _DROP_WITH_ARG.sub(" ", text)
        text = _HREF.sub(r"\1", text)
        text = _MACRO.sub(lambda m: _MACROS[m.group(1)], text)
        text = _ACCENT.sub(r"\1", text)
        text = _ESCAPED_CHAR.sub(r"\1", text)
        # Any other command goes; its braced argument stays as words ("\emph{word}" -> "word").
        text = _COMMAND.sub(" ", text)
    if "\\" in text or "{" in text or "}" in text or "$" in text:
        text = _LATEX_LEFTOVER.sub(" ", text)
    return text


def _tidy(text: str, *, removed: bool) -> str:
    if "*" in text or "_" in text:
        text = _EMPHASIS.sub("", text)
    text = " ".join(text.split())
    if removed:
        # Removals leave holes: "available at ." / "( , )" / "as , ,".
        text = _EMPTY_BRACKETS.sub(" ", text)
        text = " ".join(text.split())
        text = _SPACE_BEFORE_PUNCT.sub("", text)
        text = _SPACE_AFTER_OPEN.sub(r"\1", text)
        text = _DOUBLE_PUNCT.sub(r"\1", text)
        text = _EMPTY_BRACKETS.sub("", text).strip()
    return text


def _clean_once(text: str) -> tuple[str, bool]:
    """One pass of every step; also says whether any markup was removed."""
    given = text = _CONTROL.sub("", text)
    text = _strip_html(text)
    text = _strip_links(text)
    text = _strip_latex(text)
    out = _tidy(text, removed=text != given)
    return out, out != " ".join(given.split())


def clean_text(text: str) -> str:
    """The modelling version of a text: what is embedded and what topic keywords come from.

    Removes LaTeX math (``$...$``, ``$$...$$``, ``\\(...\\)``, ``\\[...\\]``, equation
    environments) and commands (text-formatting commands keep their words: ``\\emph{word}`` ->
    ``word``), HTML tags (``<script>``/``<style>`` with their content) and entities (``&amp;`` ->
    ``&``), URLs, bare domains, e-mail addresses and ``(cid:NN)`` PDF artefacts; collapses
    whitespace. Hyphenated words and ordinary punctuation stay. Never raises on a ``str``.

    Removing one construct can expose another (``&lt;b&gt;`` becomes a tag), so the passes repeat
    until the text stops changing, which makes ``clean_text(clean_text(x)) == clean_text(x)``.
    """
    out, removed = _clean_once(text)
    for _ in range(4):
        if not removed:  # nothing was removed, so nothing new can have been exposed
            break
        again, removed = _clean_once(out)
        if again == out:
            break
        out = again
    return out
