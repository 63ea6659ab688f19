"""Which of its options (``pipeline.model.labels``) each topic's label is, over the whole corpus.

Labels are unique within a corpus, and no label's words contain another's ("diffusion models" /
"diffusion models research" cannot both occur; nor "language models" / "language models and
transformers"). Larger topics choose first, each its best option still free. A larger topic can so
take the one label a smaller topic has, while it has others nearly as good: on ICML 2024 a topic of
166 papers on transformers and language models was "attention" (used by 39% of its papers, weak)
because a larger topic held "language models", which its own best option ("language models and
transformers", 88%) contains.

So the choice is then repaired (:data:`REPAIR`): a topic that did not get the label it would
choose alone takes it when the topics whose labels clash with it can choose again and the labels'
ranks, weighted by their topics' sizes, add up to more than before. Each exchange raises that sum,
so the repair ends; it keeps every rule of the first choice.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence

from pipeline.model.label_background import Background
from pipeline.model.label_candidates import PhraseStats, TopicTerms, is_generic
from pipeline.model.label_evidence import LabelSupport, contains, label_parts, label_support
from pipeline.model.label_fallback import fallback_label
from pipeline.model.label_options import Option, TopicOptions
from pipeline.model.label_words import label_key
from pipeline.model.labels import MAX_WORDS, RETRIEVAL_OPTIONS, near_best, topic_options

#: Whether a topic may take a label a larger topic holds (see the module's docstring).
REPAIR = True
#: Passes of the repair over the topics at most (each exchange raises the size-weighted rank).
REPAIR_PASSES = 5
#: Whether two labels may not share a part either ("layers, neural architecture search and
#: pruning" / "layers, gradient descent and generalization"): measured, see EVALUATION.md.
PARTS_APART = False


@functools.lru_cache(maxsize=65536)
def _key(label: str) -> frozenset[str]:
    """``label_key``, kept per label: every option of every topic is checked against every label taken."""
    return label_key(label)


def _clash(a: str, b: str) -> bool:
    """Two labels that may not both stand: the same, the same up to plurals and order, or one's
    words among the other's (``pipeline.model.label_evidence.contains``)."""
    return a == b or _key(a) == _key(b) or contains(a, b) or (PARTS_APART and _share_part(a, b))


def _share_part(a: str, b: str) -> bool:
    """Two labels with a part in common, up to plurals ("images and objects" / "images and videos")."""
    return not set(label_parts(a)).isdisjoint(label_parts(b))


def _free(label: str, taken: Sequence[str]) -> bool:
    return not any(_clash(label, t) for t in taken)


def label_for(
    terms: TopicTerms,
    taken: set[str] | Sequence[str],
    *,
    text: PhraseStats | None = None,
    background: Background | None = None,
    total: int = 0,
    retrieves: Callable[[str], bool] | None = None,
    options: TopicOptions | None = None,
) -> str:
    """One topic's label, avoiding labels in ``taken`` and labels whose words contain theirs or are
    contained in them; one with a term that names a setting only where the label chosen without
    such terms would be marked weak (:meth:`TopicOptions.plain`, ``Option.weak``).

    Args:
        terms: the topic's representations and papers.
        taken: labels of other topics, chosen before.
        text: ``terms.text`` already parsed.
        background: the corpus's rates (:class:`Background`) for the lift; None: no lift check.
        total: papers in the corpus (with ``terms.size``, the topic's share).
        retrieves: whether a label, embedded, is nearest to this topic's centroid; options that do
            are preferred down to ``pipeline.model.labels.RETRIEVAL_SLACK`` less in the ranking.
        options: :func:`topic_options` already computed.

    """
    taken = list(taken)
    if options is None:
        options = topic_options(terms, text=text, background=background, total=total)
    subject = _best([o for o in options if _free(o.label, taken)], retrieves)
    if subject is not None and not subject.weak:
        return subject.label
    plain = options.plain() if isinstance(options, TopicOptions) else options  # a setting's term too
    best = _best([o for o in plain if _free(o.label, taken)], retrieves)
    if best is not None:
        return best.label
    base = fallback_label(terms, text, MAX_WORDS)
    label, n = base, 2
    while not _free(label, taken) and n < 50:
        words = [t for t, _ in terms.ctfidf if t and not is_generic(t) and _free(t, taken)]
        label = words[0] if words else f"{base} {n}"
        if words:
            break
        n += 1
    return label


def _best(options: list[Option], retrieves: Callable[[str], bool] | None) -> Option | None:
    """The first of ``options`` (best first) that retrieves its topic among those near the best,
    else the best; None without options."""
    if options and retrieves is not None:
        hit = next((o for o in near_best(options)[:RETRIEVAL_OPTIONS] if retrieves(o.label)), None)
        if hit is not None:
            return hit
    return options[0] if options else None


def _near(options: list[Option]) -> list[Option]:
    """The options of one topic that may be taken for retrieving it: near its best, a few at most."""
    return near_best(options)[:RETRIEVAL_OPTIONS]


def make_labels(topics: dict[int, TopicTerms], order: list[int] | None = None, **kwargs) -> dict[int, str]:
    """Labels for all topics (:func:`label_topics`)."""
    return {topic: label for topic, (label, _) in label_topics(topics, order, **kwargs).items()}


def label_topics(
    topics: dict[int, TopicTerms],
    order: list[int] | None = None,
    *,
    background: Background | None = None,
    total: int = 0,
    embed: Callable[[list[str]], object] | None = None,
    centroids: object | None = None,
    stats: Mapping[int, PhraseStats] | None = None,
) -> dict[int, tuple[str, LabelSupport]]:
    """Labels for all topics with their support (each topic's papers read once): larger topics
    (earlier in ``order``) choose first, then the choice is repaired (:func:`repair`).

    Args:
        topics: topic id -> its representations and papers.
        order: the order in which topics choose (default: by id).
        background: the corpus's rates for the lift (:class:`Background`).
        total: papers in the corpus.
        embed: the corpus's embedder (list of texts -> normalised ``(m, dim)`` vectors) and
        centroids: float ``(len(topics), dim)`` normalised topic centroids, rows in sorted topic id
            order: with both, a label should retrieve its own topic.
        stats: topic id -> the ``PhraseStats`` of its ``text``, where made already (its keywords'
            phrases read them: the searches they cached are the labels' too).
    """
    import numpy as np

    ids = sorted(topics)
    order = list(order or ids)
    made = stats or {}
    texts = {t: made.get(t) or (PhraseStats(topics[t].text) if topics[t].text else None) for t in ids}
    options = {t: topic_options(topics[t], text=texts[t], background=background, total=total) for t in ids}
    retrieves: dict[int, Callable[[str], bool]] = {}
    if embed is not None and centroids is not None and len(ids) > 1:
        # only the options a topic may take for retrieving it: near its best, a few at most (each is
        # embedded; at hundreds of topics all of them would cost minutes)
        nearest: dict[str, int] = {}

        def add(labels) -> None:  # embeds those of ``labels`` not yet embedded, in one batch
            new = sorted(set(labels) - set(nearest))
            if new:
                sims = np.asarray(embed(new), dtype=np.float64) @ np.asarray(centroids, dtype=np.float64).T
                nearest.update({o: ids[int(j)] for o, j in zip(new, np.argmax(sims, axis=1), strict=True)})

        add(o.label for opts in options.values() for o in _near(opts))
        for t in ids:
            # the options a setting's terms give, when a topic needs them
            options[t].when_plain(lambda opts: add(o.label for o in _near(opts)))
            retrieves[t] = lambda label, t=t: nearest.get(label) == t

    def pick(topic: int, taken: Sequence[str]) -> str:
        return label_for(
            topics[topic],
            taken,
            text=texts[topic],
            background=background,
            total=total,
            retrieves=retrieves.get(topic),
            options=options[topic],
        )

    chosen: dict[int, str] = {}
    for topic in order:
        chosen[topic] = pick(topic, list(chosen.values()))
    if REPAIR and len(order) > 1:
        sizes = {t: float(topics[t].size or 1) for t in ids}
        chosen = repair(order, chosen, pick, options, sizes)
    return {t: (chosen[t], label_support(chosen[t], topics[t], text=texts[t])) for t in order}


def repair(
    order: list[int],
    chosen: dict[int, str],
    pick: Callable[[int, Sequence[str]], str],
    options: dict[int, TopicOptions] | dict[int, list[Option]],
    sizes: dict[int, float],
) -> dict[int, str]:
    """Labels chosen in ``order``, exchanged where that raises their size-weighted rank.

    For each topic (in ``order``) whose label is not the one it would choose with no label taken,
    the topics whose labels clash with that one give theirs up and choose again, in ``order``,
    among the labels then free; the exchange stands when the sum over the topics involved of
    size x rank (``Option.rank``; a label that is no option measured on the topic's papers, a
    fallback, is worth less than any) rises. Passes repeat until none stands, :data:`REPAIR_PASSES`
    at most. Topics whose papers were not read keep their labels.

    Args:
        order: topic ids, the order in which they chose.
        chosen: topic id -> its label.
        pick: (topic, labels taken) -> the label it chooses (as in the first choice).
        options: topic id -> its options, best first.
        sizes: topic id -> its papers.
    """

    def rank(topic: int, label: str) -> float | None:
        # only options measured on the topic's papers (without them ranks are an order, not a
        # score), those a setting's terms give included once made (``TopicOptions.known``)
        opts = options[topic]
        known = opts.known() if isinstance(opts, TopicOptions) else opts
        ranks = [o.rank for o in known if o.label == label and o.coverage == o.coverage]
        return max(ranks) if ranks else None

    def value(topic: int, label: str) -> float:
        # a label that is none of the topic's options (a fallback) is worth less than any option
        r = rank(topic, label)
        return sizes[topic] * r if r is not None else -math.inf

    chosen = dict(chosen)
    alone = {t: pick(t, []) for t in order}
    for _ in range(REPAIR_PASSES):
        changed = False
        for topic in order:
            want = alone[topic]
            if want == chosen[topic] or rank(topic, want) is None:
                continue
            blockers = [b for b in order if b != topic and _clash(want, chosen[b])]
            trial = dict(chosen)
            trial[topic] = want
            for b in blockers:
                del trial[b]
            for b in blockers:
                trial[b] = pick(b, [trial[c] for c in order if c != b and c in trial])
            if any(rank(b, trial[b]) is None for b in blockers):
                continue  # a blocker left without an option of its own
            involved = [topic, *blockers]
            gain = sum(value(t, trial[t]) - value(t, chosen[t]) for t in involved)
            if gain > 1e-9:
                chosen = {t: trial[t] for t in order}
                changed = True
        if not changed:
            break
    return chosen
