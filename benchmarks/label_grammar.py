"""How the papers use a word: the measurements behind the labeller's noun check (issue 20).

A label part must be something a topic is about, a noun phrase: "transformers and reduces" (a
label NeurIPS 2023 once got) reads as broken. There is no part-of-speech tagger on this machine
without a download, so ``pipeline.model.label_candidates`` reads the papers themselves: a word
followed by a determiner or an object pronoun ("reduces the") is a verb, one preceded by an
auxiliary, a modal, "not" or an adverb ("is biased", "strongly convex") is a predicate, and a word
in "-ly" whose adjective the papers also write ("exponentially") is an adverb. The product counts
these within one topic's papers (``PhraseStats.phrase``); this counts them over a whole corpus,
word by word.

For each corpus, and for every word of at least ``--min-uses`` uses that could end a label (not a
stop word, not a modifier by the head-share test), this writes the two shares and lists the words
above each limit, and the same shares for every single-word label part ever written to
``benchmarks/results/topic-variants.jsonl``. Read the lists: the limits should catch verbs and
predicates on each corpus, and no noun a label would use.

    .venv/bin/python benchmarks/label_grammar.py      # writes benchmarks/results/label-grammar.json
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.topic_variants import CORPORA as VARIANT_CORPORA  # noqa: E402
from pipeline.model import label_candidates as lc  # noqa: E402

OUT = ROOT / "benchmarks" / "results" / "label-grammar.json"
VARIANTS = ROOT / "benchmarks" / "results" / "topic-variants.jsonl"

#: The one-year conferences and IJCAI's five years, cut as ``benchmarks/topic_variants.py`` cuts them.
CORPORA = {name: VARIANT_CORPORA[name] for name in ("icml2024", "iclr2022", "neurips2023", "ijcai")}


def label_part_words() -> set[str]:
    """Single-word parts of every label the topic-variants runs wrote."""
    words: set[str] = set()
    if not VARIANTS.exists():
        return words
    for line in VARIANTS.read_text(encoding="utf-8").splitlines():
        for label, *_ in json.loads(line).get("labels", []):
            parts = re.split(r",\s*|\s+and\s+", label.replace(" (?)", ""))  # "A and B", "A, B and C"
            words |= {p.strip() for p in parts if p.strip() and " " not in p.strip()}
    return words


def shares(docs: list[str], min_uses: int, keep: set[str]) -> dict[str, dict]:
    """Per word: uses, head share, object share, predicate share, adverb (see the module doc)."""
    text = lc.topic_text(docs)
    words = text.split(" ")
    vocab = set(words)
    stop = lc.english_stop_words()
    adverbs = {w for w in vocab if lc.ADVERB_PAIRS and any(b in vocab for b in lc.adverb_bases(w))}
    uses, objects, predicates, content_next = Counter(), Counter(), Counter(), Counter()
    for i in range(1, len(words) - 1):
        w = words[i]
        uses[w] += 1
        nxt = words[i + 1]
        objects[w] += nxt in lc._OBJECT_WORDS
        predicates[w] += words[i - 1] in lc._PREDICATE_WORDS or words[i - 1] in adverbs
        content_next[w] += nxt not in stop and nxt not in ("|", "||", "")
    out = {}
    for w, n in uses.items():
        if not w.isalpha() or w in stop or (n < min_uses and w not in keep):
            continue
        out[w] = {
            "uses": n,
            "head": round(1 - content_next[w] / n, 3),
            "object": round(objects[w] / n, 3),
            "predicate": round(predicates[w] / n, 3),
            "adverb": any(b in vocab for b in lc.adverb_bases(w)),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--min-uses", type=int, default=50)
    args = parser.parse_args()
    parts = label_part_words()
    report = {
        "limits": {"object": lc.MAX_OBJECT_SHARE, "predicate": lc.MAX_PREDICATE_SHARE, "head": lc.MIN_HEAD_SHARE},
        "corpora": {},
    }
    for name, (path, keep) in CORPORA.items():
        frame = pd.read_json(path, lines=True, compression="gzip")
        frame = keep(frame) if keep is not None else frame
        docs = (frame["title"].fillna("") + ". " + frame["abstract"].fillna("")).tolist()
        table = shares(docs, args.min_uses, parts)
        endings = {w: s for w, s in table.items() if s["head"] >= lc.MIN_HEAD_SHARE}

        def over(key: str, limit: float, pool: dict) -> list:
            return sorted(((w, s[key], s["uses"]) for w, s in pool.items() if s[key] > limit), key=lambda x: x[1])

        label_parts = {w: s for w, s in table.items() if w in parts}
        report["corpora"][name] = {
            "papers": len(docs),
            "words": len(endings),
            "over_object": over("object", lc.MAX_OBJECT_SHARE, endings),
            "over_predicate": over("predicate", lc.MAX_PREDICATE_SHARE, endings),
            "adverbs": sorted(w for w, s in endings.items() if s["adverb"]),
            "label_parts": dict(sorted(label_parts.items(), key=lambda kv: -max(kv[1]["object"], kv[1]["predicate"]))),
        }
        c = report["corpora"][name]
        print(
            f"{name}: {len(docs)} papers, {len(endings)} words that can end a label; "
            f"{len(c['over_object'])} over the object limit, {len(c['over_predicate'])} over the predicate limit, "
            f"{len(c['adverbs'])} adverbs; label parts caught: "
            + ", ".join(
                w
                for w, s in label_parts.items()
                if s["object"] > lc.MAX_OBJECT_SHARE or s["predicate"] > lc.MAX_PREDICATE_SHARE or s["adverb"]
            ),
            flush=True,
        )
    OUT.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
