"""Safe text rendering: untrusted titles and abstracts become inert Markdown.

Everything from the corpus is escaped for Markdown (every punctuation character that Markdown,
HTML, Streamlit's directives, emoji short codes or math could act on gets a backslash), so
``<script>``, ``<img onerror=...>`` and ``[x](javascript:...)`` show as the characters they are.
Only three things are produced on purpose:

* LaTeX math between ``$...$`` when it passes ``is_safe_math`` (known commands, balanced braces),
  rendered by Streamlit's KaTeX; anything else stays text;
* links for ``http``/``https`` URLs only (``safe_url``);
* highlighted keywords, with Streamlit's ``:color-background[...]`` directive around escaped text.

Nothing here uses ``unsafe_allow_html``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import quote, urlsplit

import pandas as pd

#: Characters escaped with a backslash. CommonMark lets any ASCII punctuation be escaped, and the
#: escaped character is always shown literally.
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:&^=@])")
_SPACES = re.compile(r"[ \t\r\f\v]+")
_PARAGRAPHS = re.compile(r"\s*\n\s*\n\s*")
_NEWLINE = re.compile(r"\s*\n\s*")

#: ``$...$`` (not ``$ 5 and $``: no space just inside the dollars, as in pandoc).
_MATH = re.compile(r"(?<![\\$])\$(?![\s$])([^$\n]{1,300}?)(?<![\s\\])\$(?!\d)")
_URL = re.compile(r"https?://[^\s<>\"'`\]\[)(]+[^\s<>\"'`\]\[)(.,;:!?]")
_TEXT_COMMAND = re.compile(r"\\(emph|textit|textbf|underline)\{([^{}\\$]{1,200})\}")
HIGHLIGHT = ":orange-background[{}]"

#: LaTeX commands allowed inside ``$...$``: math that KaTeX renders, nothing that links, styles
#: with HTML or defines macros.
SAFE_COMMANDS = frozenset(
    [
        "alpha",
        "beta",
        "gamma",
        "delta",
        "epsilon",
        "varepsilon",
        "zeta",
        "eta",
        "theta",
        "vartheta",
        "iota",
        "kappa",
        "lambda",
        "mu",
        "nu",
        "xi",
        "pi",
        "varpi",
        "rho",
        "varrho",
        "sigma",
        "varsigma",
        "tau",
        "upsilon",
        "phi",
        "varphi",
        "chi",
        "psi",
        "omega",
        "Gamma",
        "Delta",
        "Theta",
        "Lambda",
        "Xi",
        "Pi",
        "Sigma",
        "Upsilon",
        "Phi",
        "Psi",
        "Omega",
        "ell",
        "hbar",
        "nabla",
        "partial",
        "infty",
        "emptyset",
        "varnothing",
        "aleph",
        "mathcal",
        "mathbb",
        "mathbf",
        "mathrm",
        "mathit",
        "mathsf",
        "mathtt",
        "mathfrak",
        "boldsymbol",
        "bm",
        "text",
        "textrm",
        "textit",
        "textbf",
        "operatorname",
        "hat",
        "bar",
        "tilde",
        "widetilde",
        "widehat",
        "vec",
        "dot",
        "ddot",
        "overline",
        "underline",
        "frac",
        "dfrac",
        "tfrac",
        "sqrt",
        "binom",
        "sum",
        "prod",
        "int",
        "iint",
        "oint",
        "lim",
        "limsup",
        "liminf",
        "sup",
        "inf",
        "max",
        "min",
        "arg",
        "argmin",
        "argmax",
        "log",
        "ln",
        "exp",
        "sin",
        "cos",
        "tan",
        "det",
        "dim",
        "ker",
        "Pr",
        "deg",
        "gcd",
        "mod",
        "bmod",
        "pmod",
        "cdot",
        "cdots",
        "ldots",
        "dots",
        "vdots",
        "ddots",
        "times",
        "div",
        "pm",
        "mp",
        "ast",
        "star",
        "circ",
        "bullet",
        "oplus",
        "otimes",
        "odot",
        "le",
        "leq",
        "ge",
        "geq",
        "ll",
        "gg",
        "neq",
        "ne",
        "approx",
        "sim",
        "simeq",
        "cong",
        "equiv",
        "propto",
        "prec",
        "succ",
        "preceq",
        "succeq",
        "in",
        "notin",
        "ni",
        "subset",
        "subseteq",
        "supset",
        "supseteq",
        "cup",
        "cap",
        "setminus",
        "forall",
        "exists",
        "neg",
        "land",
        "lor",
        "wedge",
        "vee",
        "to",
        "rightarrow",
        "leftarrow",
        "Rightarrow",
        "Leftarrow",
        "leftrightarrow",
        "Leftrightarrow",
        "mapsto",
        "implies",
        "iff",
        "uparrow",
        "downarrow",
        "gets",
        "left",
        "right",
        "big",
        "Big",
        "bigg",
        "Bigg",
        "langle",
        "rangle",
        "lceil",
        "rceil",
        "lfloor",
        "rfloor",
        "lvert",
        "rvert",
        "lVert",
        "rVert",
        "vert",
        "Vert",
        "mid",
        "parallel",
        "perp",
        "top",
        "bot",
        "quad",
        "qquad",
        "prime",
        "triangle",
        "square",
        "top",
        "intercal",
        "dagger",
    ]
)
_COMMAND = re.compile(r"\\([A-Za-z]+|.)")
_MATH_CHARS = re.compile(r"^[A-Za-z0-9\s+\-*/=<>()\[\]{}|^_.,;:!'\\~&]*$")


def present(value: object) -> bool:
    """True for a real value: not None, NaN, pd.NA or an empty string."""
    if value is None:
        return False
    try:
        if pd.isna(value):
            return False
    except (TypeError, ValueError):  # arrays and such
        pass
    return str(value).strip() != ""


def normalise_space(text: str) -> str:
    """Collapse runs of spaces; keep paragraph breaks (blank lines) and drop single line breaks."""
    paragraphs = _PARAGRAPHS.split(text.strip())
    return "\n\n".join(_SPACES.sub(" ", _NEWLINE.sub(" ", p)).strip() for p in paragraphs)


def md_escape(text: str) -> str:
    """Escape text so that Markdown (and Streamlit's extensions) shows it literally."""
    return _MD_SPECIAL.sub(r"\\\1", text)


def plain(text: object, default: str = "") -> str:
    """A one-line Markdown-safe version of any value (labels, captions, link labels)."""
    if not present(text):
        return default
    return md_escape(_SPACES.sub(" ", _NEWLINE.sub(" ", str(text))).strip())


def safe_url(url: object) -> str | None:
    """The URL if it is an absolute ``http``/``https`` URL, else None (``javascript:`` and co)."""
    if not isinstance(url, str):
        return None
    url = url.strip()
    if not url or any(ord(c) < 33 for c in url):
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        return None
    return url


def _link_target(url: str) -> str:
    """Percent-encode what could end or confuse a Markdown link destination."""
    return quote(url, safe=":/?#@!$&'*+,;=%~-._[]").replace("(", "%28").replace(")", "%29")


def is_safe_math(expr: str) -> bool:
    """True when ``expr`` (the inside of ``$...$``) is plain math KaTeX will render."""
    if not expr.strip() or len(expr) > 300 or not _MATH_CHARS.match(expr):
        return False
    depth = 0
    for ch in expr:
        depth += (ch == "{") - (ch == "}")
        if depth < 0:
            return False
    if depth != 0:
        return False
    for match in _COMMAND.finditer(expr):
        name = match.group(1)
        if name.isalpha() and name not in SAFE_COMMANDS:
            return False
    return True


def _keyword_pattern(keywords: Iterable[str]) -> re.Pattern | None:
    words = sorted({k.strip().lower() for k in keywords if k and k.strip()}, key=len, reverse=True)
    if not words:
        return None
    alternatives = "|".join(r"\s+".join(re.escape(w) for w in k.split()) for k in words)
    return re.compile(rf"(?<![\w-])(?:{alternatives})(?![\w-])", re.IGNORECASE)


def _prose(text: str, pattern: re.Pattern | None) -> str:
    """Escape a stretch of prose, turning http(s) URLs into links and highlighting keywords."""
    out = []
    pos = 0
    for match in _URL.finditer(text):
        out.append(_prose_words(text[pos : match.start()], pattern))
        url = match.group(0)
        target = safe_url(url)
        out.append(f"[{md_escape(url)}]({_link_target(target)})" if target else md_escape(url))
        pos = match.end()
    out.append(_prose_words(text[pos:], pattern))
    return "".join(out)


def _prose_words(text: str, pattern: re.Pattern | None) -> str:
    out = []
    pos = 0
    for match in _TEXT_COMMAND.finditer(text):
        out.append(_highlight(text[pos : match.start()], pattern))
        style = "**{}**" if match.group(1) == "textbf" else "*{}*"
        out.append(style.format(_highlight(match.group(2), pattern)))
        pos = match.end()
    out.append(_highlight(text[pos:], pattern))
    return "".join(out)


def _highlight(text: str, pattern: re.Pattern | None) -> str:
    if pattern is None:
        return md_escape(text)
    out = []
    pos = 0
    for match in pattern.finditer(text):
        out.append(md_escape(text[pos : match.start()]))
        out.append(HIGHLIGHT.format(md_escape(match.group(0))))
        pos = match.end()
    out.append(md_escape(text[pos:]))
    return "".join(out)


def to_markdown(text: object, *, keywords: Iterable[str] = (), math: bool = True) -> str:
    """Markdown for untrusted text: escaped prose, valid ``$math$``, http(s) links, highlights.

    Args:
        text: an abstract or a title (anything; None gives "").
        keywords: terms to highlight (case-insensitive, whole words).
        math: render valid ``$...$`` math (else it stays text).
    """
    if not present(text):
        return ""
    text = normalise_space(str(text))
    pattern = _keyword_pattern(keywords)
    out = []
    pos = 0
    for match in _MATH.finditer(text) if math else ():
        expr = match.group(1)
        if not is_safe_math(expr):
            continue  # stays in the prose, escaped
        out.append(_prose(text[pos : match.start()], pattern))
        out.append(f"${expr}$")
        pos = match.end()
    out.append(_prose(text[pos:], pattern))
    return "".join(out)


def count_math(text: object) -> tuple[int, int]:
    """(rendered, left as text) ``$...$`` spans in ``text``."""
    if not isinstance(text, str):
        return (0, 0)
    spans = [m.group(1) for m in _MATH.finditer(normalise_space(text))]
    ok = sum(is_safe_math(s) for s in spans)
    return ok, len(spans) - ok
