"""Settings are validated when they are loaded (TOML, command-line flags, a manifest read back for
an incremental build, ``evaluate`` or the app's query encoder): a bad value fails at once, before
any input is read or any text embedded, with a message naming the key, the value and what is
allowed. No setting reaches the test-only hashing encoder."""

from __future__ import annotations

import dataclasses
import json
import shutil

import pytest

from pipeline.build.build import build, fingerprint
from pipeline.cli import cli
from pipeline.core import artifacts, schema
from pipeline.core.config import (
    SECTIONS,
    SPEED_ONLY,
    BuildConfig,
    ClusterParams,
    EmbedParams,
    SettingsError,
    StabilityParams,
    UmapParams,
)
from pipeline.core.errors import PipelineError
from pipeline.core.settings import config_from_manifest, load_config, with_overrides
from tests.conftest import SMALL_CORPUS, TEST_ENCODER, fast_config


@pytest.fixture
def no_work(monkeypatch):
    """Fail the test if an input is read or a text embedded."""
    import pipeline.build.build
    import pipeline.build.build_embedding
    import pipeline.cli.cli_corpus
    import pipeline.ingest.ingest

    def forbidden(*args, **kwargs):
        raise AssertionError("an input was read or a text embedded before the settings were checked")

    for module in (
        pipeline.ingest.ingest,
        pipeline.build.build,
        pipeline.cli.cli_corpus,
    ):  # where it is defined and where it is called
        monkeypatch.setattr(module, "ingest", forbidden)
    for module in (pipeline.build.build_embedding, pipeline.cli.cli_corpus):
        monkeypatch.setattr(module, "embed_texts", forbidden)


def test_every_setting_has_a_rule_and_its_default_is_allowed():
    for section, cls in SECTIONS.items():
        rules = cls.ALLOWED
        for f in dataclasses.fields(cls):
            assert f.name in rules, f"{section}.{f.name} has no entry in ALLOWED"
            assert rules[f.name].describe()
        cls()  # the defaults pass their own rules
    BuildConfig()


@pytest.mark.parametrize(
    ("toml", "key", "value", "allowed"),
    [
        (
            '[cluster]\nmethod = "kmeans"',
            "cluster.method",
            "'kmeans'",
            "one of 'auto', 'graph', 'ward', 'hdbscan', 'agglomerative'",
        ),
        ('[embed]\nbackend = "hashing"', "embed.backend", "'hashing'", "one of 'onnx-int8', 'onnx', 'torch'"),
        ('[cluster]\nmin_cluster_size = "25"', "cluster.min_cluster_size", "'25'", "an integer >= 2"),
        ("[cluster]\nmin_cluster_size = 1", "cluster.min_cluster_size", "1", "an integer >= 2, or unset"),
        ("[umap]\nmin_dist_map = 2.5", "umap.min_dist_map", "2.5", "a number from 0 to 1"),
        ("[ingest]\ndedupe = 1", "ingest.dedupe", "1", "true or false"),
        ("[represent]\nngram_range = 3", "represent.ngram_range", "3", "a list of 2 integers from 1 to 4"),
        ("[represent]\nngram_range = [2, 1]", "represent.ngram_range", "[2, 1]", "the first no larger than"),
        ("[embed]\nbatch_size = 0", "embed.batch_size", "0", "an integer from 1 to 4096"),
        ('[ingest.columns]\nabstract = ""', "ingest.columns.abstract", "''", "a non-empty string"),
        ("[stability]\nruns = -1", "stability.runs", "-1", "an integer from 0 to 50"),
    ],
)
def test_a_bad_value_in_a_config_file_fails_before_any_work(tmp_path, capsys, no_work, toml, key, value, allowed):
    config = tmp_path / "settings.toml"
    config.write_text(toml + "\n")
    art = tmp_path / "art"
    code = cli.main(["--artifacts", str(art), "build", str(SMALL_CORPUS), "--name", "x", "--config", str(config)])
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err
    assert f"{config}: {key} = {value} is not allowed" in err, err
    assert allowed in err, err
    assert not art.exists()  # nothing written either


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("[cluster]\nbogus = 1", "unknown setting 'cluster.bogus'; valid settings here: cluster.method"),
        ("[bogus]\nx = 1", "unknown setting 'bogus'; valid settings here: cluster, embed"),
        ("cluster = 3", "cluster must be a table of settings"),
        ("[cluster\n", "is not valid TOML"),
    ],
)
def test_unknown_keys_and_broken_files_name_the_file(tmp_path, capsys, no_work, toml, message):
    config = tmp_path / "settings.toml"
    config.write_text(toml + "\n")
    assert cli.main(["--artifacts", str(tmp_path), "build", str(SMALL_CORPUS), "--config", str(config)]) == 1
    err = capsys.readouterr().err
    assert str(config) in err and message in err, err


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (["--min-cluster-size", "1"], "command line (--min-cluster-size): cluster.min_cluster_size = 1 is not allowed"),
        (["--min-words", "-3"], "command line (--min-words): ingest.min_words = -3 is not allowed"),
        (["--year", "30000"], "command line (--year): ingest.year = 30000 is not allowed"),
        (["--topics", "0"], "command line (--topics): cluster.n_topics = 0 is not allowed"),
        (["--seed", "-1"], "command line (--seed): umap.seed = -1 is not allowed"),
    ],
)
def test_a_bad_flag_fails_before_any_work(tmp_path, capsys, no_work, flags, expected):
    assert cli.main(["--artifacts", str(tmp_path / "art"), "build", str(SMALL_CORPUS), *flags]) == 1
    err = capsys.readouterr().err
    assert expected in err and "must be" in err, err
    assert not (tmp_path / "art").exists()


def test_no_flag_selects_the_hashing_encoder(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["--artifacts", str(tmp_path), "build", "--backend", "hashing"])
    assert exc.value.code == 2 and "invalid choice: 'hashing'" in capsys.readouterr().err


def test_python_callers_get_the_same_checks():
    with pytest.raises(SettingsError, match=r"cluster\.method = 'x' is not allowed"):
        BuildConfig(cluster=ClusterParams(method="x"))
    with pytest.raises(SettingsError, match="embed.backend = 'hashing'"):
        EmbedParams(backend="hashing")
    with pytest.raises(SettingsError, match="stability.runs"):
        dataclasses.replace(StabilityParams(), runs=True)  # a bool is not a count
    with pytest.raises(PipelineError, match="unknown setting 'umap.seeds'"):
        with_overrides(BuildConfig(), {"umap": {"seeds": 3}})
    # numbers are normalised, so equal settings give equal fingerprints
    assert UmapParams(min_dist_map=0) == UmapParams(min_dist_map=0.0)
    assert isinstance(UmapParams(min_dist_map=0).min_dist_map, float)
    assert load_config(None) == BuildConfig()


def test_speed_only_settings_do_not_change_the_fingerprint():
    inputs = [{"sha256": "abc"}]
    base = fingerprint(inputs, BuildConfig(), "k")
    for section, key in SPEED_ONLY:
        params = getattr(BuildConfig(), section)
        value = {"batch_size": 64, "threads": 3, "background_min_cpus": 0}[key]
        changed = dataclasses.replace(BuildConfig(), **{section: dataclasses.replace(params, **{key: value})})
        assert fingerprint(inputs, changed, "k") == base, key
    assert fingerprint(inputs, dataclasses.replace(BuildConfig(), umap=UmapParams(seed=1)), "k") != base
    assert fingerprint(inputs, BuildConfig(), "other model") != base
    moved = dataclasses.replace(BuildConfig(), embed=EmbedParams(model="/elsewhere/same-model"))
    assert fingerprint(inputs, moved, "k") == base  # the model's content (its key) counts, not its path


def test_changing_only_speed_settings_keeps_the_build_up_to_date(small_artifacts, tmp_path):
    root = tmp_path / "art"
    shutil.copytree(small_artifacts, root, symlinks=True)
    config = BuildConfig(embed=EmbedParams(threads=3, batch_size=64), stability=StabilityParams(background_min_cpus=0))
    assert build([SMALL_CORPUS], "small", root, config, encoder=TEST_ENCODER).mode == "up-to-date"


def _edit_manifest(root, name, edit) -> None:
    folder = artifacts.corpus_path(root, name)
    manifest = json.loads((folder / schema.MANIFEST).read_text())
    edit(manifest)
    (folder / schema.MANIFEST).write_text(json.dumps(manifest))


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda m: m["params"]["cluster"].update(method="kmeans"), "cluster.method = 'kmeans' is not allowed"),
        (lambda m: m["params"]["embed"].update(backend="hashing"), "embed.backend = 'hashing' is not allowed"),
        (lambda m: m["params"]["umap"].update(warp=9), "unknown setting 'umap.warp'"),
        (lambda m: m["params"].update(extra={}), "unknown settings section(s) extra"),
    ],
)
def test_a_manifest_with_bad_settings_is_refused_where_it_is_read(
    small_artifacts, tmp_path, capsys, monkeypatch, edit, expected
):
    root = tmp_path / "art"
    shutil.copytree(small_artifacts, root, symlinks=True)
    _edit_manifest(root, "small", edit)
    manifest_path = artifacts.corpus_path(root, "small") / schema.MANIFEST
    # evaluate reads the corpus's settings first
    assert cli.main(["--artifacts", str(root), "evaluate", "small", "--methods", "kmeans"]) == 1
    err = capsys.readouterr().err
    assert str(manifest_path) in err and expected in err and "--refit" in err, err
    # an incremental build would reuse them: refused before any input is read
    import pipeline.build.build

    real_ingest = pipeline.build.build.ingest
    monkeypatch.setattr(pipeline.build.build, "ingest", lambda *a, **k: pytest.fail("input read before the check"))
    with pytest.raises(PipelineError, match=expected.replace("(", r"\(").replace(")", r"\)")):
        build([SMALL_CORPUS], "small", root, fast_config(), encoder=TEST_ENCODER)
    # a refit does not reuse them, and replaces the build
    monkeypatch.setattr(pipeline.build.build, "ingest", real_ingest)
    assert build([SMALL_CORPUS], "small", root, fast_config(), encoder=TEST_ENCODER, refit=True).mode == "full"
    config_from_manifest(artifacts.read_manifest(artifacts.corpus_path(root, "small")), "rebuilt")


def test_the_app_never_reaches_the_hashing_encoder_through_a_manifest(small_artifacts, tmp_path):
    from explorer.state import data
    from explorer.ui import caches

    root = tmp_path / "art"
    shutil.copytree(small_artifacts, root, symlinks=True)
    _edit_manifest(root, "small", lambda m: m["params"]["embed"].update(backend="hashing"))
    _edit_manifest(root, "small", lambda m: m["embedding"].update(model_key="not-registered"))
    corpus = data.load_corpus(root, "small")
    with pytest.raises(PipelineError, match="embed.backend = 'hashing' is not allowed"):
        caches.encoder_for(corpus)


def test_the_readme_lists_every_setting_with_what_it_accepts():
    from pipeline.core import config
    from tests.conftest import ROOT

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("<!-- settings-allowed:start -->\n", 1)[1].split("\n<!-- settings-allowed:end -->", 1)[0]
    assert block == config.readme_table(), (
        "README's settings table is out of date: regenerate it from pipeline.core.config.readme_table()"
    )
