"""Research the clustering defaults: UMAP + clusterer + outlier rule as functions of corpus size.

Measures, on real corpora with MiniLM (onnx-int8) embeddings, each clustering setting over three
UMAP seeds: topics, outlier share, NMI/ARI against reference labels (IJCAI areas), topic diversity
and NPMI of c-TF-IDF keywords, stability (mean pairwise ARI between seeds) and seconds. Results
are appended as JSON lines to ``benchmarks/results/clustering-tuning.jsonl``; ``report`` turns them
into markdown tables. Findings and the recommendation: ``benchmarks/results/clustering-tuning.md``.

Examples::

    .venv/bin/python benchmarks/tune_clustering.py embed --corpus ijcai
    .venv/bin/python benchmarks/tune_clustering.py sweep --corpus ijcai --setting recommended
    .venv/bin/python benchmarks/tune_clustering.py sweep --corpus ijcai --grid hdbscan
    .venv/bin/python benchmarks/tune_clustering.py sweep --corpus ijcai \\
        --setting algo=ward,k=sqrt/3.5 --setting algo=hdbscan,mcs=25,ms=5,out=centroid
    .venv/bin/python benchmarks/tune_clustering.py baselines --corpus ijcai
    .venv/bin/python benchmarks/tune_clustering.py umap-timing --corpus neurips
    .venv/bin/python benchmarks/tune_clustering.py report

The kNN graph, the size rules, centroids, merging, smoothing and the text cleaner are the pipeline's own
(imported), so tuning follows the pipeline. Corpora: ijcai (3,281 labelled papers, 16 areas), iclr (9,761), neurips (18,682), seeds (38, the
default corpus). Embeddings and UMAP projections are cached under ``.cache-research/`` (the
embedding store is keyed per text, so each corpus is embedded once).
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import re
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipeline.core.config import ClusterParams, EmbedParams, UmapParams  # noqa: E402
from pipeline.embed.embed import embed_texts  # noqa: E402
from pipeline.evaluation.evaluate import (  # noqa: E402
    clustering_scores,
    npmi_coherence,
    stability,
    topic_diversity,
)
from pipeline.ingest.clean import clean_text  # noqa: E402
from pipeline.model.cluster_params import resolve_params, target_topics  # noqa: E402
from pipeline.model.cluster_refine import centroids  # noqa: E402
from pipeline.model.cluster_refine import merge_to as pipeline_merge_to  # noqa: E402
from pipeline.model.cluster_refine import smooth as pipeline_smooth  # noqa: E402
from pipeline.model.reduce import exact_knn  # noqa: E402
from pipeline.model.reduce import neighbours_for as pipeline_neighbours_for  # noqa: E402

DATA = Path("/work/shared/data")
SEEDS_DIR = Path("/work/shared/seeds")
CACHE = ROOT / ".cache-research"
RESULTS = ROOT / "benchmarks" / "results"
JSONL = RESULTS / "clustering-tuning.jsonl"
CORPORA = {
    "ijcai": "ijcai2020-2024-primary-area.jsonl.gz",
    "iclr": "iclr-2018-2022-submissions.jsonl.gz",
    "neurips": "neurips-1987-2023.jsonl.gz",
    "icml": "icml2024-unlabeled.jsonl.gz",
    "seeds": None,
}
SEEDS = (0, 1, 2)


# --------------------------------------------------------------------------------------------
# Corpora, text cleaning for keywords, embeddings
# --------------------------------------------------------------------------------------------


def clean_for_terms(text: str) -> str:
    """The pipeline's own clean stage (``pipeline.ingest.clean.clean_text``): URLs, LaTeX and HTML out."""
    return clean_text(text)


@dataclass
class Corpus:
    name: str
    texts: list[str]  # what is embedded: title + ". " + abstract
    labels: np.ndarray | None  # reference labels (IJCAI areas) or None


def load_corpus(name: str) -> Corpus:
    if name == "seeds":
        texts: list[str] = []
        for path in sorted(SEEDS_DIR.glob("*.txt")):
            paragraphs = [p.strip() for p in path.read_text().split("\n\n") if p.strip()]
            texts += [" ".join(p.split()) for p in paragraphs[1:]]  # first paragraph: the title line
        return Corpus(name, texts, None)
    import pandas as pd

    df = pd.read_json(DATA / CORPORA[name], lines=True, compression="gzip")
    labels = None
    if name == "ijcai":
        df = df[df["label"].notna()].reset_index(drop=True)
        labels = df["label"].astype(str).to_numpy()
    texts = (df["title"].fillna("").astype(str) + ". " + df["abstract"].astype(str)).tolist()
    return Corpus(name, texts, labels)


def embeddings_for(corpus: Corpus, progress: bool = False) -> np.ndarray:
    def report(done: int, total: int) -> None:
        if progress and (done % 1024 < 16 or done == total):
            print(f"  embedded {done}/{total}", file=sys.stderr, flush=True)

    return embed_texts(corpus.texts, EmbedParams(), cache_dir=CACHE, progress=report).vectors


# --------------------------------------------------------------------------------------------
# kNN graph and UMAP (cached)
# --------------------------------------------------------------------------------------------


def run_umap(
    x: np.ndarray,
    *,
    dims: int,
    nn: int,
    min_dist: float,
    seed: int | None,
    epochs: int | None,
    knn: tuple[np.ndarray, np.ndarray] | None,
) -> np.ndarray:
    from umap import UMAP

    kw = {}
    if knn is not None:
        kw["precomputed_knn"] = (knn[0][:, :nn], knn[1][:, :nn], None)
    model = UMAP(
        n_neighbors=nn,
        n_components=dims,
        min_dist=min_dist,
        metric="cosine",
        random_state=seed,
        n_epochs=epochs,
        low_memory=True,
        init="spectral" if len(x) > 4 * dims + 2 else "random",
        **kw,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(model.fit_transform(x), dtype=np.float32)


def projection(
    corpus: str,
    x: np.ndarray,
    *,
    nn: int,
    seed: int,
    epochs: int | None,
    dims: int = 5,
    min_dist: float = 0.0,
) -> tuple[np.ndarray, float]:
    """UMAP projection (cached on disk) and the seconds it took when computed."""
    nn = min(nn, len(x) - 1)
    key = f"{corpus}-n{len(x)}-nn{nn}-d{dims}-md{min_dist}-s{seed}-e{epochs}"
    folder = CACHE / "proj"
    folder.mkdir(parents=True, exist_ok=True)
    path, meta = folder / f"{key}.npy", folder / f"{key}.json"
    if path.exists() and meta.exists():
        return np.load(path, allow_pickle=False), json.loads(meta.read_text())["seconds"]
    start = time.perf_counter()
    knn = exact_knn(x, nn)
    out = run_umap(x, dims=dims, nn=nn, min_dist=min_dist, seed=seed, epochs=epochs, knn=knn)
    seconds = time.perf_counter() - start
    np.save(path, out, allow_pickle=False)
    meta.write_text(json.dumps({"seconds": seconds}))
    return out, seconds


# --------------------------------------------------------------------------------------------
# The recommendation
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClusteringDefaults:
    """Recommended reduction + clustering settings for a corpus of a given size.

    UMAP (``n_neighbors`` on one shared cosine kNN graph, ``n_components``, ``min_dist``) gives the
    clustering space; HDBSCAN finds small dense "micro" topics there (``min_cluster_size``,
    ``min_samples``, ``selection``); their normalised mean embeddings are merged by
    average-linkage on cosine distance down to ``n_topics`` (no merge when HDBSCAN found fewer);
    outliers go to the most cosine-similar merged topic centroid in embedding space; finally one
    round of majority vote over each paper's ``smooth_k`` nearest neighbours (embedding space)
    smooths topic borders. Every paper ends in a topic; the raw outliers are flagged.
    """

    n_neighbors: int
    min_cluster_size: int
    min_samples: int
    n_topics: int
    smooth_k: int
    n_components: int = 5
    min_dist: float = 0.0
    selection: str = "eom"
    merge: str = "average-cosine"
    outliers: str = "centroid"

    def as_setting(self) -> dict:
        return {
            "nn": self.n_neighbors,
            "algo": "hdbscan-merge",
            "mcs": self.min_cluster_size,
            "ms": self.min_samples,
            "sel": self.selection,
            "k": self.n_topics,
            "out": self.outliers,
            "smooth": self.smooth_k,
        }


def params_for_size(n: int) -> ClusteringDefaults:
    """The pipeline's HDBSCAN defaults for n papers (``pipeline.model.cluster_params.resolve_params``)."""
    p = resolve_params(ClusterParams(method="hdbscan"), n)
    return ClusteringDefaults(
        n_neighbors=neighbours_for(n),
        min_cluster_size=p.min_cluster_size,
        min_samples=p.min_samples,
        n_topics=p.n_topics,
        smooth_k=p.smooth_k,
    )


def neighbours_for(n: int) -> int:
    """UMAP n_neighbors as the pipeline resolves it (``pipeline.model.reduce.neighbours_for``)."""
    return pipeline_neighbours_for(n, UmapParams())


# --------------------------------------------------------------------------------------------
# Clusterers and outlier rules
# --------------------------------------------------------------------------------------------


def resolve_k(spec: str | int | None, n: int) -> int | None:
    """Target topic count: an int, or a rule of n ("sqrt/3.5", "log", "auto")."""
    if spec in (None, "", "none"):
        return None
    if isinstance(spec, int) or str(spec).isdigit():
        return int(spec)
    spec = str(spec)
    if spec.startswith("sqrt/"):
        return max(2, round(math.sqrt(n) / float(spec[5:])))
    if spec.startswith("auto"):
        return target_topics(n)
    raise ValueError(f"unknown k rule {spec!r}")


def hdbscan_labels(points: np.ndarray, *, mcs: int, ms: int | None, sel: str, eps: float, membership: bool = False):
    from hdbscan import HDBSCAN

    model = HDBSCAN(
        min_cluster_size=max(2, mcs),
        min_samples=ms,
        cluster_selection_method=sel,
        cluster_selection_epsilon=eps,
        metric="euclidean",
        prediction_data=membership,
        core_dist_n_jobs=1,
    )
    labels = model.fit_predict(points).astype(np.int64)
    return labels, model


def reassign(labels: np.ndarray, x: np.ndarray, rule: str, *, points=None, model=None, k: int = 15) -> np.ndarray:
    """Place outliers (-1) in a topic. Rules: none, centroid (cosine to topic centroids in embedding
    space), knn (similarity-weighted vote of the k most similar non-outliers), membership (HDBSCAN's
    soft membership argmax), umapcentroid (nearest centroid in the clustering space)."""
    out = labels.copy()
    mask = out == -1
    if rule == "none" or not mask.any() or (~mask).sum() == 0:
        return out
    if rule == "centroid":
        ids, vec = centroids(labels, x)
        out[mask] = ids[np.argmax(x[mask] @ vec.T, axis=1)]
    elif rule == "knn":
        inl = np.flatnonzero(~mask)
        sims = x[mask] @ x[inl].T
        kk = min(k, len(inl))
        top = np.argpartition(-sims, kk - 1, axis=1)[:, :kk]
        votes: list[int] = []
        for row, cand in zip(sims, top, strict=True):
            score: dict[int, float] = {}
            for j in cand:
                lab = int(labels[inl[j]])
                score[lab] = score.get(lab, 0.0) + float(row[j])
            votes.append(max(score, key=score.__getitem__))
        out[mask] = votes
    elif rule == "membership":
        import hdbscan

        mv = hdbscan.all_points_membership_vectors(model)
        if mv.ndim == 1:
            mv = mv[:, None]
        out[mask] = np.argmax(mv[mask], axis=1)
    elif rule == "umapcentroid":
        ids = np.array(sorted(set(labels.tolist()) - {-1}))
        cen = np.stack([points[labels == c].mean(axis=0) for c in ids])
        d = ((points[mask][:, None, :] - cen[None]) ** 2).sum(-1)
        out[mask] = ids[np.argmin(d, axis=1)]
    else:
        raise ValueError(f"unknown outlier rule {rule!r}")
    return out


def keep_outliers(labels: np.ndarray, raw: np.ndarray, x: np.ndarray, share: float) -> np.ndarray:
    """Undo the reassignment for the raw outliers least similar to their new topic's centroid,
    so that at most ``share`` of all papers stay outliers."""
    out = labels.copy()
    cand = np.flatnonzero(raw == -1)
    budget = int(share * len(labels))
    if not len(cand) or budget <= 0:
        return out
    ids, vec = centroids(labels, x)
    pos = {c: i for i, c in enumerate(ids.tolist())}
    sim = np.einsum("ij,ij->i", x[cand], vec[[pos[int(c)] for c in labels[cand]]])
    out[cand[np.argsort(sim)[:budget]]] = -1
    return out


_KNN_CACHE: dict[int, np.ndarray] = {}


def smooth(labels: np.ndarray, x: np.ndarray, k: int, knn: np.ndarray | None = None) -> np.ndarray:
    """The pipeline's smoothing (``pipeline.model.cluster_refine.smooth``) on the exact kNN graph of ``x``
    (computed once per corpus) unless ``knn`` is given."""
    if knn is None:
        key = id(x)
        if key not in _KNN_CACHE or _KNN_CACHE[key].shape[1] < k + 1:
            _KNN_CACHE.clear()
            _KNN_CACHE[key] = exact_knn(x, max(k + 1, 31))[0]
        knn = _KNN_CACHE[key]
    return pipeline_smooth(labels, knn, k)


def merge_to(labels: np.ndarray, x: np.ndarray, k: int, how: str = "average") -> np.ndarray:
    """Merge clusters until k remain: agglomerative over cluster centroids (cosine average
    linkage, or size-weighted Ward on centroids with how="ward")."""
    if how != "ward":
        return pipeline_merge_to(labels, x, k)
    ids, vec = centroids(labels, x)
    if len(ids) <= k:
        return labels
    # Ward between whole clusters (centroid + size), not between centroids as points.
    from scipy.cluster.hierarchy import fcluster

    sizes = np.array([(labels == c).sum() for c in ids], dtype=float)
    groups = fcluster(_weighted_ward(vec, sizes), k, criterion="maxclust") - 1
    mapping = dict(zip(ids.tolist(), np.asarray(groups).tolist(), strict=True))
    return np.array([mapping.get(int(c), -1) for c in labels], dtype=np.int64)


def _weighted_ward(vec: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Scipy-style linkage matrix of Ward merges between clusters given their centroids and sizes
    (cost of merging A and B: |A||B|/(|A|+|B|) * ||c_A - c_B||^2). O(m^3) for m clusters."""
    m = len(vec)
    cen = np.zeros((2 * m - 1, vec.shape[1]))
    cen[:m] = vec
    size = np.zeros(2 * m - 1)
    size[:m] = sizes
    count = np.zeros(2 * m - 1)
    count[:m] = 1
    active = list(range(m))
    rows = []
    for nxt in range(m, 2 * m - 1):
        c = cen[active]
        sz = size[active]
        d2 = ((c[:, None, :] - c[None, :, :]) ** 2).sum(-1)
        cost = sz[:, None] * sz[None, :] / (sz[:, None] + sz[None, :]) * d2
        np.fill_diagonal(cost, np.inf)
        i, j = np.unravel_index(np.argmin(cost), cost.shape)
        a, b = active[i], active[j]
        size[nxt] = size[a] + size[b]
        count[nxt] = count[a] + count[b]
        cen[nxt] = (cen[a] * size[a] + cen[b] * size[b]) / size[nxt]
        rows.append([a, b, math.sqrt(2 * cost[i, j]), count[nxt]])
        active = [t for t in active if t not in (a, b)] + [nxt]
    z = np.array(rows, dtype=np.float64)
    z[:, 2] = np.maximum.accumulate(z[:, 2])  # guard tiny non-monotonic steps from float error
    return z


def space_points(space: str, x: np.ndarray, proj: np.ndarray | None) -> np.ndarray:
    if space == "umap":
        return proj
    if space == "raw":
        return x
    if space.startswith("pca"):
        from sklearn.decomposition import PCA

        dims = int(space[3:] or 50)
        return PCA(n_components=min(dims, len(x) - 1, x.shape[1]), random_state=0).fit_transform(x).astype(np.float32)
    raise ValueError(space)


def cluster_once(s: dict, x: np.ndarray, proj: np.ndarray | None, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Labels for one setting on one seed. Returns (final labels, raw labels before reassignment)."""
    n = len(x)
    points = space_points(s.get("space", "umap"), x, proj)
    algo = s.get("algo", "hdbscan")
    k = resolve_k(s.get("k"), n)
    model = None
    if algo in ("hdbscan", "hdbscan-merge"):
        mcs = resolve_size(s.get("mcs", 10), n)
        ms = s.get("ms")
        ms = None if ms in (None, "none") else resolve_size(ms, n, mcs=mcs)
        labels, model = hdbscan_labels(
            points,
            mcs=mcs,
            ms=ms,
            sel=s.get("sel", "eom"),
            eps=float(s.get("eps", 0.0)),
            membership=s.get("out") == "membership",
        )
        if (labels == -1).all():
            labels = np.zeros(n, dtype=np.int64)
        raw = labels.copy()
        order = s.get("order", "merge-first")
        if algo == "hdbscan-merge" and k and order == "merge-first":
            labels = merge_to(labels, x, k, s.get("how", "average"))
        labels = reassign(labels, x, s.get("out", "none"), points=points, model=model)
        if algo == "hdbscan-merge" and k and order == "reassign-first":
            labels = merge_to(labels, x, k, s.get("how", "average"))
        if s.get("keep"):  # leave the least typical reassigned papers out (up to this share)
            labels = keep_outliers(labels, raw, x, float(s["keep"]))
        if s.get("smooth") not in (None, 0, "0"):
            k_smooth = min(15, mcs - 1) if s["smooth"] == "auto" else int(s["smooth"])
            if k_smooth >= 2:
                labels = smooth(labels, x, k_smooth)
        if s.get("minsize"):  # dissolve topics smaller than min_cluster_size (after smoothing)
            small = np.isin(labels, [c for c, m in zip(*np.unique(labels, return_counts=True), strict=True) if m < mcs])
            if small.any() and (~small).any():
                labels = reassign(np.where(small, -1, labels), x, "centroid")
        return labels, raw
    if algo in ("ward", "agglo"):
        from sklearn.cluster import AgglomerativeClustering

        conn = None
        if s.get("conn"):
            from sklearn.neighbors import kneighbors_graph

            conn = kneighbors_graph(points, int(s["conn"]), include_self=False)
        linkage = s.get("linkage", "ward")
        labels = AgglomerativeClustering(n_clusters=k, linkage=linkage, connectivity=conn).fit_predict(points)
        return labels.astype(np.int64), labels.astype(np.int64)
    if algo == "kmeans":
        from sklearn.cluster import KMeans

        labels = KMeans(n_clusters=k, random_state=seed, n_init=int(s.get("ninit", 1))).fit_predict(points)
        return labels.astype(np.int64), labels.astype(np.int64)
    raise ValueError(f"unknown algo {algo!r}")


def resolve_size(spec, n: int, mcs: int | None = None) -> int:
    """min_cluster_size / min_samples: an int, 'sqrt/c' (sqrt(n)/c), 'frac/f' (f*n), 'mcs/c'."""
    if isinstance(spec, int) or str(spec).isdigit():
        return int(spec)
    spec = str(spec)
    if spec.startswith("sqrt/"):
        return max(2, round(math.sqrt(n) / float(spec[5:])))
    if spec.startswith("frac/"):
        return max(2, round(n * float(spec[5:])))
    if spec.startswith("mcs/"):
        return max(1, round(mcs / float(spec[4:])))
    raise ValueError(spec)


# --------------------------------------------------------------------------------------------
# Topic words (c-TF-IDF as BERTopic computes it) and keyword hygiene
# --------------------------------------------------------------------------------------------


@dataclass
class Terms:
    counts: object  # csr (n, terms)
    presence: object
    vocab: dict[str, int]
    terms: np.ndarray


def corpus_terms(texts: list[str]) -> Terms:
    from pipeline.model.vocab import doc_terms

    dt = doc_terms([clean_for_terms(t) for t in texts])
    return Terms(dt.counts, dt.presence(), dt.vocabulary, dt.terms)


def topic_words(labels: np.ndarray, terms: Terms, top_n: int = 10) -> list[list[str]]:
    """Top c-TF-IDF terms per topic (outliers excluded), BERTopic's ClassTfidfTransformer."""
    import scipy.sparse as sp
    from bertopic.vectorizers import ClassTfidfTransformer

    ids = np.array(sorted(set(labels.tolist()) - {-1}))
    if not len(ids) or terms.counts.shape[1] == 0:
        return []
    pos = {c: i for i, c in enumerate(ids)}
    rows = [pos[c] for c in labels if c != -1]
    cols = np.flatnonzero(labels != -1)
    agg = sp.csr_matrix((np.ones(len(cols)), (rows, cols)), shape=(len(ids), len(labels))) @ terms.counts
    used = np.flatnonzero(np.asarray(agg.sum(axis=0)).ravel() > 0)  # terms only outliers use: no idf
    ctfidf = ClassTfidfTransformer().fit_transform(sp.csr_matrix(agg[:, used])).toarray()
    return [[str(terms.terms[used[j]]) for j in np.argsort(-row)[:top_n] if row[j] > 0] for row in ctfidf]


_BAD_TERM = re.compile(r"(\d|https?|www|\\|\$|\{|\}|_)")


def bad_keywords(words: list[list[str]]) -> list[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    bad = []
    for w in itertools.chain.from_iterable(words):
        if _BAD_TERM.search(w) or any(tok in ENGLISH_STOP_WORDS for tok in w.split()) or len(w) < 2:
            bad.append(w)
    return bad


# --------------------------------------------------------------------------------------------
# Evaluation of one setting over seeds
# --------------------------------------------------------------------------------------------


def parse_setting(text: str) -> dict:
    out: dict = {}
    for part in filter(None, text.split(",")):
        key, _, value = part.partition("=")
        out[key.strip()] = int(value) if value.strip().lstrip("-").isdigit() else value.strip()
    return out


def setting_name(s: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in s.items())


def uses_umap(s: dict) -> bool:
    return s.get("space", "umap") == "umap"


def evaluate_setting(
    corpus: Corpus,
    x: np.ndarray,
    terms: Terms | None,
    s: dict,
    *,
    seeds=SEEDS,
    log: Callable[[str], None] = print,
) -> dict:
    n = len(x)
    per_seed, labels_all = [], []
    umap_seconds = []
    for seed in seeds:
        proj = None
        if uses_umap(s):
            # views > 1: concatenate projections from several seeds (a cheap consensus)
            views = [
                projection(
                    corpus.name,
                    x,
                    nn=_nn(s, n),
                    seed=seed + 1000 * v,
                    epochs=_epochs(s),
                    dims=int(s.get("dims", 5)),
                )
                for v in range(int(s.get("views", 1)))
            ]
            proj = np.hstack([p for p, _ in views])
            umap_seconds.append(sum(sec for _, sec in views))
        start = time.perf_counter()
        labels, raw = cluster_once(s, x, proj, seed)
        seconds = time.perf_counter() - start
        row = {"seed": seed, "seconds": seconds, "raw_outlier_share": float((raw == -1).mean())}
        row["n_topics"] = int(len(set(labels.tolist()) - {-1}))
        row["outlier_share"] = float((labels == -1).mean())
        sizes = np.bincount(labels[labels >= 0]) if (labels >= 0).any() else np.zeros(1)
        sizes = sizes[sizes > 0]
        row["min_size"], row["max_share"] = int(sizes.min()), float(sizes.max() / n)
        if corpus.labels is not None:
            row.update({k: v for k, v in clustering_scores(corpus.labels, labels).items() if k != "outlier_share"})
        if terms is not None and seed == seeds[0]:
            words = topic_words(labels, terms)
            row["diversity"] = topic_diversity(words) if words else math.nan
            row["npmi"] = npmi_coherence(words, terms.presence, terms.vocab)[0] if words else math.nan
            row["bad_keywords"] = len(bad_keywords(words))
            row["example_topics"] = [" | ".join(w[:5]) for w in words[:3]]
        per_seed.append(row)
        labels_all.append(labels)
    result = {
        "corpus": corpus.name,
        "n": n,
        "setting": setting_name(s),
        "seeds": list(seeds),
        "stability": stability(labels_all) if len(labels_all) > 1 else math.nan,
        "umap_seconds": float(np.mean(umap_seconds)) if umap_seconds else 0.0,
    }
    for key in (
        "n_topics",
        "outlier_share",
        "raw_outlier_share",
        "nmi_all",
        "ari_all",
        "seconds",
        "min_size",
        "max_share",
    ):
        vals = [r[key] for r in per_seed if key in r]
        if vals:
            result[key] = float(np.mean(vals))
    for key in ("diversity", "npmi", "bad_keywords", "example_topics"):
        if key in per_seed[0]:
            result[key] = per_seed[0][key]
    result["per_seed"] = [{k: v for k, v in r.items() if k != "example_topics"} for r in per_seed]
    log(_fmt(result))
    return result


def _nn(s: dict, n: int) -> int:
    nn = s.get("nn", 15)
    return neighbours_for(n) if nn == "auto" else int(nn)


def _epochs(s: dict) -> int | None:
    e = s.get("epochs")
    return None if e in (None, "none", "auto") else int(e)


def _fmt(r: dict) -> str:
    def f(key, spec=".3f"):
        v = r.get(key)
        return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, spec)

    return (
        f"{r['corpus']:8s} {r['setting']:60s} topics={f('n_topics', '.1f')} out={f('outlier_share', '.3f')} "
        f"raw_out={f('raw_outlier_share', '.2f')} NMI={f('nmi_all')} ARI={f('ari_all')} "
        f"div={f('diversity', '.2f')} npmi={f('npmi')} stab={f('stability')} "
        f"t={f('seconds', '.1f')}s bad={r.get('bad_keywords', '-')}"
    )


def append_results(rows: list[dict], tag: str) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    with JSONL.open("a") as handle:
        for row in rows:
            handle.write(json.dumps({"tag": tag, **row}) + "\n")


# --------------------------------------------------------------------------------------------
# Grids (the explorations recorded in clustering-tuning.md)
# --------------------------------------------------------------------------------------------


def grid(name: str) -> list[dict]:
    g: list[dict] = []
    if name == "hdbscan":  # plain HDBSCAN on UMAP 5-d, keep outliers / reassign
        for mcs, ms, sel in itertools.product([10, 15, 25, 40, 60, 80], [None, 1, 5], ["eom", "leaf"]):
            g.append({"algo": "hdbscan", "mcs": mcs, "ms": ms or "none", "sel": sel, "out": "none"})
    elif name == "outliers":  # outlier rules on a few HDBSCAN settings
        for mcs, ms in [(15, 5), (25, 5), (40, 5), (40, "none")]:
            for out in ["none", "centroid", "knn", "membership", "umapcentroid"]:
                g.append({"algo": "hdbscan", "mcs": mcs, "ms": ms, "sel": "eom", "out": out})
    elif name == "k":  # k-targeted methods over k
        for k in [10, 16, 20, 25, 30, 40, 60]:
            g.append({"algo": "ward", "k": k})
            g.append({"algo": "kmeans", "k": k})
            g.append({"algo": "ward", "space": "raw", "k": k})
            g.append({"algo": "kmeans", "space": "raw", "k": k})
    elif name == "merge":  # HDBSCAN (small clusters) merged down to k
        for k in [16, 20, 30]:
            for mcs in [10, 15, 25]:
                g.append({"algo": "hdbscan-merge", "mcs": mcs, "ms": 5, "k": k, "out": "centroid"})
                g.append({"algo": "hdbscan-merge", "mcs": mcs, "ms": 5, "k": k, "out": "centroid", "how": "ward"})
    elif name == "merge2":  # finer: small HDBSCAN clusters, centroid reassignment, cosine merge
        for mcs, ms, k in itertools.product([8, 10, 12, 15], [3, 5, 10], [20, 25, 30]):
            g.append({"algo": "hdbscan-merge", "mcs": mcs, "ms": ms, "k": k, "out": "centroid"})
            g.append({"algo": "hdbscan-merge", "mcs": mcs, "ms": ms, "k": k, "out": "centroid", "smooth": 15})
    elif name == "nn":  # UMAP neighbours and epochs
        for nn in [10, 15, 30, 50]:
            for epochs in ["auto", 100]:
                g.append({"nn": nn, "epochs": epochs, "algo": "ward", "k": 20})
                g.append({"nn": nn, "epochs": epochs, "algo": "hdbscan", "mcs": 25, "ms": 5, "out": "centroid"})
    else:
        raise SystemExit(f"unknown grid {name!r}")
    return g


# --------------------------------------------------------------------------------------------
# Commands
# --------------------------------------------------------------------------------------------


def cmd_embed(args) -> None:
    for name in args.corpus:
        corpus = load_corpus(name)
        start = time.perf_counter()
        x = embeddings_for(corpus, progress=True)
        print(f"{name}: {x.shape} in {time.perf_counter() - start:.1f}s")


def cmd_sweep(args) -> None:
    corpus = load_corpus(args.corpus)
    x = embeddings_for(corpus)
    terms = None if args.no_words else corpus_terms(corpus.texts)
    settings = []
    for text in args.setting or []:
        if text == "recommended":  # params_for_size for this corpus
            settings.append({"preset": "recommended", **params_for_size(len(x)).as_setting()})
        else:
            settings.append(parse_setting(text))
    for name in args.grid or []:
        settings += grid(name)
    seeds = tuple(args.seeds)
    rows = []
    for s in settings:
        rows.append(evaluate_setting(corpus, x, terms, s, seeds=seeds))
        append_results(rows[-1:], args.tag or (args.grid[0] if args.grid else "adhoc"))


def cmd_baselines(args) -> None:
    from pipeline.evaluation import baselines

    corpus = load_corpus(args.corpus)
    x = embeddings_for(corpus)
    terms = corpus_terms(corpus.texts)
    docs = [clean_for_terms(t) for t in corpus.texts]
    k = args.k or (len(set(corpus.labels.tolist())) if corpus.labels is not None else target_topics(len(x)))
    runs: dict[str, list] = {
        "vanilla_bertopic": [],
        "vanilla_reduce_outliers": [],
        f"kmeans_raw_k{k}": [],
        f"lda_k{k}": [],
    }
    for seed in args.seeds:
        runs["vanilla_bertopic"].append(baselines.vanilla_bertopic(docs, x, None, seed))
        runs["vanilla_reduce_outliers"].append(baselines.vanilla_bertopic_reduce_outliers(docs, x, None, seed))
        runs[f"kmeans_raw_k{k}"].append(baselines.kmeans(x, k, seed))
        if not args.no_lda:
            runs[f"lda_k{k}"].append(baselines.lda(docs, k, seed))
    rows = []
    for name, results in runs.items():
        if not results:
            continue
        per = []
        for r in results:
            row = {
                "n_topics": len(set(r.labels.tolist()) - {-1}),
                "outlier_share": float((r.labels == -1).mean()),
            }
            if corpus.labels is not None:
                sc = clustering_scores(corpus.labels, r.labels)
                row.update(nmi_all=sc["nmi_all"], ari_all=sc["ari_all"])
            row["seconds"] = r.seconds
            per.append(row)
        out = {"corpus": corpus.name, "n": len(x), "setting": f"baseline:{name}", "seeds": list(args.seeds)}
        for key in per[0]:
            out[key] = float(np.mean([p[key] for p in per]))
        out["stability"] = stability([r.labels for r in results]) if len(results) > 1 else math.nan
        words = results[0].topic_words
        if words:
            out["diversity"] = topic_diversity(words)
            out["npmi"] = npmi_coherence(words, terms.presence, terms.vocab)[0]
            out["bad_keywords"] = len(bad_keywords(words))
            out["example_topics"] = [" | ".join(w[:5]) for w in words[:3]]
        elif name.startswith("kmeans"):
            words = topic_words(results[0].labels, terms)
            out["diversity"] = topic_diversity(words)
            out["npmi"] = npmi_coherence(words, terms.presence, terms.vocab)[0]
        print(_fmt(out), flush=True)
        rows.append(out)
    append_results(rows, "baselines")


def cmd_umap_timing(args) -> None:
    """Time the reduction stage: kNN graph once, UMAP 5-d and 2-d with several n_epochs."""
    corpus = load_corpus(args.corpus)
    x = embeddings_for(corpus)
    n = len(x)
    rows = []

    def record(what: str, seconds: float, **extra) -> None:
        row = {"corpus": corpus.name, "n": n, "setting": f"timing:{what}", "seconds": seconds, **extra}
        print(f"{what:55s} {seconds:7.1f}s", flush=True)
        rows.append(row)

    start = time.perf_counter()
    knn = exact_knn(x, args.nn)
    record(f"exact kNN k={args.nn} (numpy blocks)", time.perf_counter() - start)
    if args.nndescent:
        from pynndescent import NNDescent

        start = time.perf_counter()
        _ = NNDescent(x, n_neighbors=args.nn, metric="cosine", random_state=0, low_memory=True).neighbor_graph
        record(f"pynndescent kNN k={args.nn}, seeded", time.perf_counter() - start)
    # Warm numba's compilation so that the first timed run does not include it.
    run_umap(x[:500], dims=5, nn=args.nn, min_dist=0.0, seed=0, epochs=20, knn=exact_knn(x[:500], args.nn))
    run_umap(x[:500], dims=2, nn=args.nn, min_dist=0.1, seed=0, epochs=20, knn=exact_knn(x[:500], args.nn))
    for epochs in args.epochs:
        e = None if epochs == 0 else epochs
        for dims, md in [(5, 0.0), (2, 0.1)]:
            start = time.perf_counter()
            run_umap(x, dims=dims, nn=args.nn, min_dist=md, seed=0, epochs=e, knn=knn)
            record(f"UMAP {dims}-d epochs={e or 'auto'} seeded, precomputed kNN", time.perf_counter() - start)
    if args.unseeded:
        start = time.perf_counter()
        run_umap(x, dims=5, nn=args.nn, min_dist=0.0, seed=None, epochs=None, knn=knn)
        record("UMAP 5-d epochs=auto UNseeded (parallel), precomputed kNN", time.perf_counter() - start)
        start = time.perf_counter()
        run_umap(x, dims=5, nn=args.nn, min_dist=0.0, seed=0, epochs=None, knn=None)
        record("UMAP 5-d epochs=auto seeded, own kNN (pynndescent)", time.perf_counter() - start)
    append_results(rows, "timing")


def cmd_build_timing(args) -> None:
    """Time the recommended reduce + cluster + represent chain in this (cold) process."""
    corpus = load_corpus(args.corpus)
    x = embeddings_for(corpus)
    n = len(x)
    rec = params_for_size(n)
    epochs = None if args.epochs == 0 else args.epochs
    times: dict[str, float] = {}
    t0 = time.perf_counter()

    def lap(name: str, start: float) -> float:
        times[name] = time.perf_counter() - start
        print(f"{name:45s} {times[name]:6.1f}s", flush=True)
        return time.perf_counter()

    start = time.perf_counter()
    import umap  # noqa: F401  (import cost is part of a cold build)
    from bertopic import BERTopic

    start = lap("import umap + bertopic", start)
    nn = min(args.nn or rec.n_neighbors, n - 1)
    knn = exact_knn(x, max(nn, 16))
    _KNN_CACHE.clear()
    _KNN_CACHE[id(x)] = knn[0]  # smoothing reuses the graph, as the pipeline would
    knn = (knn[0][:, :nn], knn[1][:, :nn])
    start = lap(f"exact kNN k={nn}", start)
    proj = run_umap(x, dims=5, nn=nn, min_dist=0.0, seed=42, epochs=epochs, knn=knn)
    start = lap(f"UMAP 5-d (n_epochs={epochs or 'auto'}, incl. numba JIT)", start)
    run_umap(x, dims=2, nn=nn, min_dist=0.1, seed=42, epochs=epochs, knn=knn)
    start = lap(f"UMAP 2-d (n_epochs={epochs or 'auto'})", start)
    labels, _ = cluster_once({**rec.as_setting(), "nn": nn}, x, proj, 42)
    start = lap(f"cluster ({len(set(labels.tolist()))} topics)", start)
    from bertopic.cluster import BaseCluster
    from bertopic.dimensionality import BaseDimensionalityReduction

    from pipeline.model.vocab import default_min_df, make_vectorizer

    docs = [clean_for_terms(t) for t in corpus.texts]
    model = BERTopic(
        umap_model=BaseDimensionalityReduction(),
        hdbscan_model=BaseCluster(),
        vectorizer_model=make_vectorizer(ngram_range=(1, 2), min_df=default_min_df(n), max_df=0.6),
    )
    model.fit(docs, embeddings=x, y=labels)
    start = lap("BERTopic c-TF-IDF representation (manual mode)", start)
    times["total"] = times["seconds"] = time.perf_counter() - t0
    print(f"{'total':45s} {times['total']:6.1f}s")
    append_results(
        [
            {
                "corpus": corpus.name,
                "n": n,
                "setting": f"build-timing:nn={nn},epochs={epochs or 'auto'}",
                **times,
            }
        ],
        "build-timing",
    )


def _relabel(groups: np.ndarray, ids: np.ndarray, labels: np.ndarray) -> np.ndarray:
    mapping = dict(zip(ids.tolist(), np.asarray(groups).tolist(), strict=True))
    return np.array([mapping.get(int(c), -1) for c in labels], dtype=np.int64)


def cmd_alternatives(args) -> None:
    """Methods outside the sweep grammar, on a labelled corpus: graph clustering of the kNN graph
    (Louvain, spectral), GMM on UMAP, co-association consensus over UMAP seeds, k-means style
    refinement in embedding space, and other distances for merging HDBSCAN micro-clusters."""
    import networkx as nx
    import scipy.sparse as sp
    from bertopic.vectorizers import ClassTfidfTransformer
    from sklearn.cluster import AgglomerativeClustering, SpectralClustering
    from sklearn.mixture import GaussianMixture

    corpus = load_corpus(args.corpus)
    x = embeddings_for(corpus)
    n = len(x)
    rows: list[dict] = []

    def record(name: str, runs: list[np.ndarray], seconds: float = math.nan) -> None:
        per = [clustering_scores(corpus.labels, r) for r in runs] if corpus.labels is not None else []
        row = {
            "corpus": corpus.name,
            "n": n,
            "setting": f"alt:{name}",
            "n_topics": float(np.mean([len(set(r.tolist()) - {-1}) for r in runs])),
            "outlier_share": float(np.mean([(r == -1).mean() for r in runs])),
            "stability": stability(runs) if len(runs) > 1 else math.nan,
            "seconds": seconds,
        }
        if per:
            row["nmi_all"] = float(np.mean([p["nmi_all"] for p in per]))
            row["ari_all"] = float(np.mean([p["ari_all"] for p in per]))
        print(_fmt(row), flush=True)
        rows.append(row)

    seeds = list(args.seeds)
    proj = {s: projection(corpus.name, x, nn=15, seed=s, epochs=None)[0] for s in seeds}
    k = args.k

    # Graph clustering of the cosine kNN graph (no UMAP at all).
    for kn in (15, 30):
        idx, dist = exact_knn(x, kn + 1)
        graph = nx.Graph()
        graph.add_weighted_edges_from(
            (i, int(j), float(1 - d)) for i in range(n) for j, d in zip(idx[i, 1:], dist[i, 1:], strict=True)
        )
        for res in (0.5, 1.0):
            runs, start = [], time.perf_counter()
            for seed in seeds:
                labels = np.empty(n, dtype=np.int64)
                for c, members in enumerate(nx.community.louvain_communities(graph, resolution=res, seed=seed)):
                    labels[list(members)] = c
                runs.append(labels)
            record(f"louvain knn={kn} resolution={res}", runs, (time.perf_counter() - start) / len(seeds))
        rows_, cols = np.repeat(np.arange(n), kn), idx[:, 1:].ravel()
        affinity = sp.csr_matrix(((1 - dist[:, 1:]).ravel(), (rows_, cols)), shape=(n, n))
        affinity = affinity.maximum(affinity.T)
        runs = [
            SpectralClustering(k, affinity="precomputed", random_state=s, assign_labels="cluster_qr").fit_predict(
                affinity
            )
            for s in seeds
        ]
        record(f"spectral knn={kn} k={k}", runs)

    # Centred embeddings (remove the common direction), then Ward.
    centred = x - x.mean(axis=0)
    centred /= np.linalg.norm(centred, axis=1, keepdims=True)
    record(f"ward on centred raw embeddings k={k}", [AgglomerativeClustering(k).fit_predict(centred)])

    # GMM on UMAP 5-d.
    runs = [GaussianMixture(k, random_state=s).fit(proj[s]).predict(proj[s]) for s in seeds]
    record(f"gmm on umap k={k}", runs)

    # Co-association consensus: each run pools three UMAP seeds (needs 3 x len(seeds) projections).
    if len(seeds) * 3 <= 9:
        more = {s: projection(corpus.name, x, nn=15, seed=s, epochs=None)[0] for s in range(3 * len(seeds))}
        base = {s: AgglomerativeClustering(k, linkage="average").fit_predict(p) for s, p in more.items()}
        runs = []
        for r in range(len(seeds)):
            co = np.zeros((n, n), dtype=np.float32)
            for s in range(3 * r, 3 * r + 3):
                co += base[s][:, None] == base[s][None, :]
            runs.append(AgglomerativeClustering(k, metric="precomputed", linkage="average").fit_predict(1 - co / 3))
        record(f"consensus of 3 average-linkage runs k={k}", runs)

    # Micro-clusters of the recommended HDBSCAN, merged with other distances, and refinement.
    rec = params_for_size(n)
    terms = corpus_terms(corpus.texts)
    knn_idx = exact_knn(x, 16)[0]
    variants: dict[str, list[np.ndarray]] = {
        "centroid cosine (recommended)": [],
        "c-TF-IDF cosine": [],
        "kNN edges": [],
        "recommended + 3 k-means steps": [],
    }
    for seed in seeds:
        raw, _ = hdbscan_labels(proj[seed], mcs=rec.min_cluster_size, ms=rec.min_samples, sel="eom", eps=0.0)
        ids, vec = centroids(raw, x)
        d_cos = np.clip(1 - vec @ vec.T, 0, 2)
        pos = {c: i for i, c in enumerate(ids.tolist())}
        members = np.flatnonzero(raw != -1)
        onehot = sp.csr_matrix(
            (np.ones(len(members)), ([pos[int(c)] for c in raw[members]], members)), shape=(len(ids), n)
        )
        agg = onehot @ terms.counts
        ctf = ClassTfidfTransformer().fit_transform(sp.csr_matrix(agg)).toarray()
        ctf /= np.clip(np.linalg.norm(ctf, axis=1, keepdims=True), 1e-12, None)
        d_ctf = np.clip(1 - ctf @ ctf.T, 0, 2)
        edges = np.zeros((len(ids), len(ids)))
        src, dst = np.repeat(raw, 15), raw[knn_idx[:, 1:]].ravel()
        ok = (src >= 0) & (dst >= 0)
        np.add.at(edges, ([pos[int(c)] for c in src[ok]], [pos[int(c)] for c in dst[ok]]), 1)
        edges = edges + edges.T
        size = np.asarray(onehot.sum(axis=1)).ravel()
        edges /= np.sqrt(np.outer(size, size))
        d_knn = 1 - edges / edges.max()
        for name, dmat in [
            ("centroid cosine (recommended)", d_cos),
            ("c-TF-IDF cosine", d_ctf),
            ("kNN edges", d_knn),
        ]:
            np.fill_diagonal(dmat, 0)
            groups = AgglomerativeClustering(rec.n_topics, metric="precomputed", linkage="average").fit_predict(dmat)
            labels = smooth(reassign(_relabel(groups, ids, raw), x, "centroid"), x, rec.smooth_k)
            variants[name].append(labels)
        refined = variants["centroid cosine (recommended)"][-1]
        for _ in range(3):
            cids, cvec = centroids(refined, x)
            refined = cids[np.argmax(x @ cvec.T, axis=1)]
        variants["recommended + 3 k-means steps"].append(refined)
    for name, runs in variants.items():
        record(f"micro-clusters merged by {name}", runs)
    append_results(rows, "alternatives")


def cmd_report(args) -> None:
    rows = [json.loads(line) for line in JSONL.read_text().splitlines() if line.strip()]
    if args.tag:
        rows = [r for r in rows if r.get("tag") in args.tag]
    if args.corpus:
        rows = [r for r in rows if r.get("corpus") in args.corpus]
    cols = [
        ("setting", "setting", "{}"),
        ("N", "n", "{:d}"),
        ("topics", "n_topics", "{:.1f}"),
        ("outliers", "outlier_share", "{:.3f}"),
        ("NMI", "nmi_all", "{:.3f}"),
        ("ARI", "ari_all", "{:.3f}"),
        ("diversity", "diversity", "{:.2f}"),
        ("NPMI", "npmi", "{:.3f}"),
        ("stability", "stability", "{:.3f}"),
        ("seconds", "seconds", "{:.1f}"),
    ]
    by_tag: dict[str, list[dict]] = {}
    for r in rows:
        by_tag.setdefault(f"{r.get('tag')} / {r['corpus']}", []).append(r)
    for tag, group in by_tag.items():
        print(f"\n### {tag}\n")
        print("| " + " | ".join(c[0] for c in cols) + " |")
        print("|" + "---|" * len(cols))
        for r in group:
            cells = []
            for _, key, spec in cols:
                v = r.get(key)
                if v is None or (isinstance(v, float) and math.isnan(v)):
                    cells.append("-")
                else:
                    cells.append(spec.format(int(v) if spec == "{:d}" else v))
            print("| " + " | ".join(cells) + " |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("embed", help="embed corpora into the research cache")
    p.add_argument("--corpus", nargs="+", default=["ijcai", "iclr", "neurips", "seeds"], choices=list(CORPORA))
    p.set_defaults(func=cmd_embed)

    p = sub.add_parser("sweep", help="evaluate clustering settings over seeds")
    p.add_argument("--corpus", required=True, choices=list(CORPORA))
    p.add_argument(
        "--setting",
        action="append",
        help="'recommended' (params_for_size) or key=value pairs, e.g. "
        "algo=hdbscan-merge,mcs=sqrt/5,ms=mcs/2,k=auto,out=centroid,smooth=15,nn=auto",
    )
    p.add_argument("--grid", nargs="*", help="named grids: hdbscan outliers k merge merge2 nn")
    p.add_argument("--seeds", nargs="+", type=int, default=list(SEEDS))
    p.add_argument("--tag", help="tag stored with the results (default: the grid name)")
    p.add_argument("--no-words", action="store_true", help="skip keywords (diversity, NPMI)")
    p.set_defaults(func=cmd_sweep)

    p = sub.add_parser("baselines", help="vanilla BERTopic (+reduce_outliers), k-means, LDA")
    p.add_argument("--corpus", required=True, choices=list(CORPORA))
    p.add_argument("--k", type=int, help="k for k-means and LDA (default: number of labels, or target)")
    p.add_argument("--seeds", nargs="+", type=int, default=list(SEEDS))
    p.add_argument("--no-lda", action="store_true")
    p.set_defaults(func=cmd_baselines)

    p = sub.add_parser("umap-timing", help="time kNN + UMAP 5-d and 2-d")
    p.add_argument("--corpus", default="neurips", choices=list(CORPORA))
    p.add_argument("--nn", type=int, default=15)
    p.add_argument("--epochs", nargs="+", type=int, default=[0, 200, 100, 50], help="0 = UMAP's default")
    p.add_argument("--unseeded", action="store_true", help="also time unseeded and own-kNN UMAP")
    p.add_argument("--nndescent", action="store_true", help="also time pynndescent's kNN")
    p.set_defaults(func=cmd_umap_timing)

    p = sub.add_parser("build-timing", help="time the recommended chain (kNN, UMAP 5-d + 2-d, cluster, c-TF-IDF)")
    p.add_argument("--corpus", default="neurips", choices=list(CORPORA))
    p.add_argument("--epochs", type=int, default=0, help="UMAP n_epochs, 0 = UMAP's default")
    p.add_argument("--nn", type=int, default=0, help="UMAP n_neighbors (default: the recommendation)")
    p.set_defaults(func=cmd_build_timing)

    p = sub.add_parser("alternatives", help="Louvain, spectral, GMM, consensus, other merge distances")
    p.add_argument("--corpus", default="ijcai", choices=list(CORPORA))
    p.add_argument("--k", type=int, default=16, help="topics for the k-targeted methods")
    p.add_argument("--seeds", nargs="+", type=int, default=list(SEEDS))
    p.set_defaults(func=cmd_alternatives)

    p = sub.add_parser("report", help="markdown tables from the JSON lines results")
    p.add_argument("--tag", nargs="*")
    p.add_argument("--corpus", nargs="*")
    p.set_defaults(func=cmd_report)

    args = parser.parse_args(argv)
    args.func(args)


if __name__ == "__main__":
    main()
