"""The map component's committed bundle matches its committed sources, without Node.

``frontend/build.mjs`` writes a SHA-256 of every source file into the bundle's banner; this test
recomputes it the same way. Edit a source without running ``make frontend`` and it fails.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

FRONTEND = Path(__file__).resolve().parent.parent / "frontend"
BUNDLE = FRONTEND / "dist" / "atlas-map.js"
SOURCES = ("build.mjs", "package.json", "package-lock.json", "tsconfig.json", "src")


def sources_hash(root: Path = FRONTEND) -> str:
    """As ``sourcesHash`` in build.mjs: each file's relative path, a NUL, its bytes, a NUL, in path order."""
    paths = []
    for name in SOURCES:
        path = root / name
        paths += sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    digest = hashlib.sha256()
    for rel in sorted(p.relative_to(root).as_posix() for p in paths):
        digest.update(rel.encode() + b"\0")
        digest.update((root / rel).read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def test_the_committed_bundle_was_built_from_the_committed_sources():
    banner = BUNDLE.read_text(encoding="utf-8").split("\n", 1)[0]
    recorded = re.search(r"sources sha256 ([0-9a-f]{64})", banner)
    assert recorded, f"no sources hash in the banner of {BUNDLE}: {banner[:200]}"
    assert recorded.group(1) == sources_hash(), "frontend/ changed since the bundle was built: run `make frontend`"


def test_the_hash_sees_every_source_change(tmp_path):
    import shutil

    for name in SOURCES:
        src = FRONTEND / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, tmp_path / name)
    before = sources_hash(tmp_path)
    (tmp_path / "src" / "map.ts").write_text((tmp_path / "src" / "map.ts").read_text() + "\n// edited\n")
    assert sources_hash(tmp_path) != before


def test_the_bundle_is_one_module_safe_to_inline():
    code = BUNDLE.read_text(encoding="utf-8")
    assert "</script" not in code.lower() and "<!--" not in code  # the export inlines it in a <script>
    assert re.search(r"export\s*\{[^}]*\bas default\b", code)  # Streamlit imports its default export
    assert "globalThis.AtlasMap" in code or "globalThis).AtlasMap" in code  # the export's entry point
    assert len(code) < 150_000  # a small bundle: it travels with every new browser session
