"""The artifact layout: file names, table columns and the schema version.

This module is the single source of truth for what the pipeline writes and the app reads; the
README's "Artifacts" section is checked against it by ``tests/test_docs.py``. It imports nothing
heavy, so the app can use it freely.

Schema changes are additive (new columns, new files). A breaking change bumps ``SCHEMA_VERSION``;
the reader then tells the user to rebuild that corpus.
"""

from __future__ import annotations

SCHEMA_VERSION = 1

MANIFEST = "manifest.json"
PAPERS = "papers.parquet"
PAPERS_ARROW = "papers.arrow"
TOPICS = "topics.parquet"
TOPIC_TERMS = "topic_terms.parquet"
HIERARCHY = "hierarchy.parquet"
TERMS = "terms.parquet"
YEARS = "years.parquet"
TOPIC_YEARS = "topic_years.parquet"
KEYWORD_YEARS = "keyword_years.parquet"
INGEST_REPORT = "ingest_report.parquet"
EMBEDDINGS = "embeddings.npy"
TOPIC_EMBEDDINGS = "topic_embeddings.npy"
TOPIC_SIMILARITY = "topic_similarity.npy"
TOPIC_DISTRIBUTION = "topic_distribution.npy"
BERTOPIC_DIR = "bertopic"
KEYWORD_INDEX = "keyword_index"
MAP = "map.json"

#: Every file (or folder) of a built corpus, with what it holds. Documented in the README.
FILES: dict[str, str] = {
    MANIFEST: "schema version, inputs with hashes, parameters, counts, how the kNN graph was found (exact, or approximate "
    "with its measured recall), package versions, time and peak memory per stage",
    PAPERS: "one row per paper, keyed by doc_id: display and cleaned text, metadata, topic, topic score, 2-D map position",
    PAPERS_ARROW: "the columns of papers.parquet the app reads (APP_PAPER_COLUMNS), in row order, as an uncompressed "
    "Arrow IPC file that the app memory-maps: a corpus opens without reading its texts, which are paged in when shown",
    TOPICS: "one row per topic: label, size, share, keywords with c-TF-IDF weights, representative papers, quality",
    TOPIC_TERMS: "per topic its top terms with c-TF-IDF weight and frequencies, for the relevance (lambda) slider",
    HIERARCHY: "BERTopic's topic hierarchy: each merge of two clusters of topics, with its distance",
    TERMS: "the modelling vocabulary: each term with the number and share of papers using it, most used first (ties by term), the order the app reads it in",
    YEARS: "papers per year (empty when the corpus has no years)",
    TOPIC_YEARS: "each topic's paper count and share of each year's papers",
    KEYWORD_YEARS: "each term's document frequency and share of each year's papers",
    INGEST_REPORT: "every input row that was skipped or changed, with file, row, reason and detail",
    EMBEDDINGS: "float32 (papers, dim) sentence embeddings, row i is papers.row == i",
    TOPIC_EMBEDDINGS: "float32 (topics, dim) topic embeddings, row i is topics.parquet row i",
    TOPIC_SIMILARITY: "float32 (topics, topics) cosine similarity of topic embeddings",
    TOPIC_DISTRIBUTION: "float32 (papers, topics) softmax over topics of each paper's cosine similarity to the topics' "
    "embeddings at a fixed temperature of 0.05 (rows sum to 1; a relative score, not a calibrated probability)",
    BERTOPIC_DIR: "the fitted BERTopic model saved with safetensors (never pickle)",
    KEYWORD_INDEX: "the keyword search's BM25 index of each paper's title and abstract as shown (bm25s's own files: "
    "the score matrix as .npy arrays the app memory-maps, vocabulary and parameters as JSON), `pairs.npy` (each "
    "paper's 128-byte signature of the pairs of words its title and abstract hold next to each other, which narrows "
    "the exact-phrase check), `counts.npy` and `doc_len.npy` (each score's word count and each paper's number of "
    "words, from which a build that adds papers computes the scores again without reading the other papers) and "
    "meta.json with its version, tokeniser, what it indexes and paper count; written by every build, a build that "
    "adds papers updating the previous build's index with them",
    MAP: "what the map draws besides the papers, computed once by the build instead of by the app's first "
    "visitor: the topics' colours (touching topics never share one, `pipeline.formats.palette.map_colouring`), "
    "the pairs of topics that touch on the map with their links, and `spacing`, how close the closest papers lie "
    "(the map's zoom bound, `pipeline.formats.blobs.point_spacing`); the app computes them itself for builds "
    "without it and after topic edits",
}

#: Columns of papers.parquet, in order, with their meaning.
PAPER_COLUMNS: dict[str, str] = {
    "doc_id": "stable paper id: the input's id when it has one, else a hash of title and abstract",
    "short_id": "the id in reading-list, tour and export links: the first 8 characters of the base32 BLAKE2b hash of "
    "doc_id, 13 where two papers' 8 collide (`pipeline.formats.ids`); builds without it get it from doc_id on load",
    "row": "position of the paper in embeddings.npy and topic_distribution.npy",
    "title": "display title (the input's, or derived from the abstract)",
    "title_derived": "True when the title was derived from the abstract",
    "abstract": "the abstract as given, for display (untrusted text: never rendered as HTML)",
    "model_text": "cleaned title + abstract that was embedded and modelled (no LaTeX, HTML or URLs; a one-letter variable joined to a word keeps its letter: `$k$-means` is `k-means`)",
    "year": "publication year, or null",
    "venue": "venue, or null",
    "authors": "authors joined with '; ', or null",
    "url": "link to the paper, or null",
    "source_id": "the input's own id, or null",
    "label": "a label from the input (e.g. a primary area), or null",
    "keywords": "author keywords joined with '; ', or null",
    "source_file": "input file the paper came from",
    "source_row": "1-based row (record, or paragraph for text files) in that file",
    "extra": "other input columns as a JSON object",
    "topic": "canonical BERTopic topic id (-1 only when outliers are kept)",
    "topic_prob": "the paper's topic's entry in topic_distribution.npy (a softmax score, not a calibrated "
    "probability; the app and the export show the cosine similarity to the topic's embedding instead)",
    "was_outlier": "True when clustering left the paper unassigned (a border paper) and it was placed afterwards (`cluster.reassign_outliers`)",
    "placed": "True when the paper was added after the topics were fitted and placed into the topic most of its nearest papers belong to",
    "x": "map position, horizontal",
    "y": "map position, vertical",
}

#: Columns of papers.parquet the app reads, in ``papers.arrow`` (``source_*`` and ``extra`` stay in
#: papers.parquet only).
APP_PAPER_COLUMNS = [
    "doc_id", "short_id", "row", "title", "title_derived", "abstract", "model_text", "year", "venue", "authors",
    "url", "label", "keywords", "topic", "topic_prob", "was_outlier", "placed", "x", "y",
]  # fmt: skip

TOPIC_COLUMNS: dict[str, str] = {
    "topic": "canonical BERTopic topic id",
    "label": "short human-readable label (2-5 words), unique in the corpus",
    "name": "BERTopic's own name for the topic",
    "size": "number of papers",
    "share": "size / all papers",
    "keywords": "top terms by c-TF-IDF, one form of each, none a part of a longer one in most of its uses, each "
    "written as the phrase most of its uses in the topic sit in ('series forecasting' as 'time series forecasting')",
    "keyword_terms": "the vocabulary's terms behind the keywords, in their order",
    "keyword_weights": "their c-TF-IDF weights",
    "keybert": "top terms re-ranked by KeyBERTInspired",
    "mmr": "top terms re-ranked by maximal marginal relevance",
    "representative_doc_ids": "the papers most typical of the topic, best first",
    "x": "label position on the map (median of its papers)",
    "y": "label position on the map",
    "n_reassigned": "papers that clustering left out and were placed in this topic",
    "coherence": "NPMI coherence of the top 10 keywords' terms on the corpus",
    "growth": "change in share per year (least squares slope, percentage points), null without years",
    "stability": "how well clusterings of random 90% samples of the papers find the topic again: mean best Jaccard overlap over the papers each kept, 0-1 (null when not measured)",
    "label_support": "share of the topic's papers whose title or abstract use all the words of its label (of any "
    "part of an 'A and B' or 'A, B and C' label; plurals folded), 0-1, read on up to 250 of its papers, as the lower bound of its 80% "
    "confidence interval; below 0.5 (at two decimals, as shown) the app and the offline export mark the label weak "
    "with (?) (null: not measured)",
    "spread": "how alike the topic's papers are: the mean cosine similarity of its papers' embeddings to their "
    "normalised mean, 0-1, on the papers the topics were fitted on (null: not measured)",
    "part_labels": "for a broad topic (more than 12% of the papers and a spread under the median topic's), the "
    "labels of the parts its papers form (k-means on the first 10 principal components of their embeddings), largest "
    "part first; empty otherwise",
    "part_sizes": "papers in each part, in the order of part_labels",
    "part_supports": "each part label's support, measured as label_support is on the part's papers",
    "part_doc_ids": "each part's most central papers (up to 3 doc_ids per part), in the order of part_labels",
    "part_stability": "how far a broad topic's split holds: the mean agreement (ARI) of its parts with the parts made "
    "from 5 random 90% samples of its papers, on the papers both hold; below 0.5 the app calls the split one way among "
    "several (null: not a broad topic)",
}

TOPIC_TERM_COLUMNS: dict[str, str] = {
    "topic": "topic id",
    "term": "a 1- or 2-word term",
    "ctfidf": "c-TF-IDF weight of the term in the topic",
    "count": "occurrences of the term in the topic's papers",
    "p_topic": "count / all term occurrences in the topic",
    "p_corpus": "term occurrences in the corpus / all term occurrences",
}

HIERARCHY_COLUMNS: dict[str, str] = {
    "parent_id": "id of the merged cluster",
    "parent_name": "its name",
    "topics": "topic ids under it",
    "left_id": "first child (a topic id or a merged cluster id)",
    "left_name": "its name",
    "right_id": "second child",
    "right_name": "its name",
    "distance": "distance at which the two were merged",
}

TERM_COLUMNS: dict[str, str] = {
    "term": "a 1- or 2-word term of the modelling vocabulary",
    "df": "papers using the term",
    "share": "df / all papers",
    "written": 'the term as the corpus\'s papers write it inside a sentence ("LLMs", "Gaussian processes"): '
    "each word in the form most of its uses have, where that is not lower case and two papers use it; "
    "what the app shows",
}

YEAR_COLUMNS: dict[str, str] = {"year": "year", "n_papers": "papers in that year"}

TOPIC_YEAR_COLUMNS: dict[str, str] = {
    "topic": "topic id",
    "year": "year",
    "n": "papers of the topic in that year",
    "share": "n / papers in that year",
}

KEYWORD_YEAR_COLUMNS: dict[str, str] = {
    "term": "term",
    "year": "year",
    "df": "papers of that year using the term",
    "share": "df / papers in that year",
}

INGEST_REPORT_COLUMNS: dict[str, str] = {
    "source_file": "input file",
    "source_row": "1-based row in that file (0 for the whole file)",
    "action": "'skipped' (row not used) or 'changed' (row used, a field dropped or fixed)",
    "reason": "short code: empty_abstract, short_abstract, duplicate, near_duplicate, bad_year, ...",
    "detail": "what was found and what to do about it",
}

#: Comparisons of a corpus with a reference (``pipeline/analysis/compare.py``), stored beside the corpora as
#: ``.compare/<new>/<reference>/`` (a link to its current version) by ``python -m pipeline compare``.
COMPARE_DIR = ".compare"
COMPARISON = "comparison.json"
CMP_PAPERS = "new_papers.parquet"
CMP_SHARES = "topic_shares.parquet"
CMP_TERMS = "distinctive_terms.parquet"
CMP_FLOWS = "topic_flows.parquet"
CMP_MATCHES = "topic_matches.parquet"

COMPARE_FILES: dict[str, str] = {
    COMPARISON: "both build ids, version, parameters, counts, the novelty calibration and the size of change the intervals can detect",
    CMP_PAPERS: "one row per new paper, most novel first: its place in the reference's topics and map, novelty, closest prior work",
    CMP_SHARES: "one row per reference topic: its share then and now with intervals, and the verdict (grew, shrank, gone, no clear change)",
    CMP_TERMS: "terms used more (side new) or less (side ref) in the new corpus: log-odds with an informative Dirichlet prior",
    CMP_FLOWS: "the evidence behind topic matching: for each pair of topics the share of each one's papers in the other",
    CMP_MATCHES: "one row per topic of either corpus: matched, merged, split, new or vanished, with its partners",
}

CMP_PAPER_COLUMNS: dict[str, str] = {
    "rank": "1 = the new paper farthest from the reference",
    "doc_id": "the new paper's doc_id",
    "new_topic": "its topic in the new corpus",
    "ref_topic": "the reference topic it is placed in: the topic of most of its 10 nearest reference papers",
    "ref_topic_prob": "share of those neighbours in that topic",
    "x": "position on the reference's map (from its nearest reference papers)",
    "y": "position on the reference's map",
    "novelty": "1 - mean cosine similarity to its 5 nearest reference papers",
    "p_value": "share of reference papers at least as far from the rest of the reference (conformal p-value)",
    "far": "p_value below the threshold: farther from the reference than almost all of its own papers",
    "nearest_sim": "cosine similarity to the closest reference paper",
    "neighbour_ids": "doc_ids of the closest reference papers, closest first",
    "neighbour_sims": "their cosine similarities",
}

CMP_SHARE_COLUMNS: dict[str, str] = {
    "topic": "reference topic id",
    "label": "its label",
    "n_before": "reference papers in the topic",
    "share_before": "their share of the reference",
    "lo_before": "interval of that share (Wilson, Bonferroni over the topics)",
    "hi_before": "upper end",
    "n_after": "new papers placed in the topic",
    "share_after": "their share of the new corpus",
    "lo_after": "interval of that share",
    "hi_after": "upper end",
    "change": "share_after - share_before",
    "change_lo": "interval of the change (Newcombe's hybrid score, Bonferroni over the topics)",
    "change_hi": "upper end",
    "verdict": "grew, shrank, gone (shrank to no paper) or no clear change (the interval holds 0)",
    "keywords": "the topic's top keywords",
    "far_new": "new papers placed in the topic that are far from the whole reference",
}

CMP_TERM_COLUMNS: dict[str, str] = {
    "term": "a term of either corpus's vocabulary, as its papers write it (`terms.parquet`'s `written`: \"LLMs\")",
    "df_new": "new papers using it",
    "df_ref": "reference papers using it",
    "share_new": "df_new / new papers",
    "share_ref": "df_ref / reference papers",
    "delta": "log-odds ratio, new against reference, shrunk by the prior",
    "z": "delta over its standard deviation",
    "side": "new (more used in the new corpus) or ref (less used)",
}

CMP_FLOW_COLUMNS: dict[str, str] = {
    "topic_a": "reference topic (-1: nothing close in the reference)",
    "topic_b": "new corpus topic (-1: nothing close in the new corpus)",
    "papers_a": "papers of topic_a whose nearest new papers (or own copy) are in topic_b",
    "from_a": "papers_a / size of topic_a",
    "papers_b": "papers of topic_b whose nearest reference papers (or own copy) are in topic_a",
    "from_b": "papers_b / size of topic_b",
    "centroid_sim": "cosine similarity of the two topic embeddings",
}

CMP_MATCH_COLUMNS: dict[str, str] = {
    "side": "a (reference) or b (new corpus)",
    "topic": "topic id on that side",
    "label": "its label",
    "size": "its papers",
    "status": "matched, merged, split, gone, unseen (the other corpus is too small to tell), unclear or small",
    "status_text": "the status in words for that side (e.g. merged into, merger of, new, vanished)",
    "partners": "topic ids on the other side",
    "partner_shares": "share of the topic's papers in each partner",
    "none_share": "share of its papers with nothing close on the other side",
    "best_partner": "the partner holding most of its papers",
    "best_share": "that share",
    "best_sim": "best cosine similarity of its topic embedding to one of the other side",
    "keywords": "its top keywords",
}

COMPARE_TABLES: dict[str, dict[str, str]] = {
    CMP_PAPERS: CMP_PAPER_COLUMNS,
    CMP_SHARES: CMP_SHARE_COLUMNS,
    CMP_TERMS: CMP_TERM_COLUMNS,
    CMP_FLOWS: CMP_FLOW_COLUMNS,
    CMP_MATCHES: CMP_MATCH_COLUMNS,
}

TABLES: dict[str, dict[str, str]] = {
    PAPERS: PAPER_COLUMNS,
    TOPICS: TOPIC_COLUMNS,
    TOPIC_TERMS: TOPIC_TERM_COLUMNS,
    HIERARCHY: HIERARCHY_COLUMNS,
    TERMS: TERM_COLUMNS,
    YEARS: YEAR_COLUMNS,
    TOPIC_YEARS: TOPIC_YEAR_COLUMNS,
    KEYWORD_YEARS: KEYWORD_YEAR_COLUMNS,
    INGEST_REPORT: INGEST_REPORT_COLUMNS,
}


def readme_section() -> str:
    """The README's artifact reference (between the ``artifact-files`` markers), from this module.

    ``tests/test_docs.py`` fails when the README differs; regenerate it with
    ``python -c "from pipeline.core import schema; print(schema.readme_section())"``.
    """
    lines = ["| file | contents |", "|---|---|"]
    lines += [f"| `{f}{'/' if f in (BERTOPIC_DIR, KEYWORD_INDEX) else ''}` | {d} |" for f, d in FILES.items()]
    lines += _column_details(TABLES)
    lines += _compare_section()
    return "\n".join(lines)


def _column_details(tables: dict[str, dict[str, str]]) -> list[str]:
    """Each table's columns as a collapsed block of the README's artifact reference."""
    lines: list[str] = []
    for table, columns in tables.items():
        lines += [
            "",
            f"<details><summary>Columns of <code>{table}</code></summary>",
            "",
            "| column | meaning |",
            "|---|---|",
        ]
        lines += [f"| `{c}` | {d} |" for c, d in columns.items()]
        lines += ["", "</details>"]
    return lines


def _compare_section() -> list[str]:
    """The comparison files (``.compare/NEW/REF/``) for the README's artifact reference."""
    lines = ["", f"Comparisons with a reference, in `{COMPARE_DIR}/NEW/REF/`:", "", "| file | contents |", "|---|---|"]
    lines += [f"| `{f}` | {d} |" for f, d in COMPARE_FILES.items()]
    return lines + _column_details(COMPARE_TABLES)
