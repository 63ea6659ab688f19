"""The import contract (issue 21; README, "Where things are"): imports go one way.

    pipeline:  formats <- core <- ingest, embed, model <- analysis, evaluation <- build, export <- cli
    explorer:  state <- services <- ui          (the whole pipeline <- explorer <- pages/, app.py)

Subpackages at the same level do not import each other (ingest, embed and model are siblings).

Every product module's imports are read with `ast` (function-local ones included), without
importing anything, so a broken arrow fails here in a second instead of as a circular-import error
in whichever page happens to load first.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("pipeline", "explorer", "pages")

# The explorer's UI layer is explorer.ui.* (the modules that draw, and Streamlit's caches and URL
# state): only it, the pages and app.py import Streamlit.

# Lower layers never import higher ones, and subpackages of one level do not import each other.
LAYERS = {
    "pipeline.formats": 0,  # what the pipeline writes and the app reads: the map's binary containers, palette, ids
    "pipeline.core": 1,  # the artifact layout, reading/writing builds, settings, the manifest, progress
    "pipeline.ingest": 2,
    "pipeline.embed": 2,
    "pipeline.model": 2,
    "pipeline.analysis": 3,
    "pipeline.evaluation": 3,
    "pipeline.build": 4,
    "pipeline.export": 4,
    "pipeline.cli": 5,  # the command line, over every stage
    "pipeline": 6,  # __main__: python -m pipeline
    "explorer.state": 7,
    "explorer.services": 8,
    "explorer.ui": 9,
    "explorer": 9,
    "pages": 10,
    "app": 10,
}


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _product_files() -> dict[str, Path]:
    files = {"app": ROOT / "app.py"}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            files[_module_name(path)] = path
    return files


FILES = _product_files()
MODULES = set(FILES)


def _resolve(name: str) -> str | None:
    """The project module `name` refers to (a module, or an attribute of a package), else None."""
    while name:
        if name in MODULES:
            return name
        name = name.rpartition(".")[0]
    return None


def _imports(module: str) -> list[tuple[str, int, bool]]:
    """(imported project module or third-party top-level name, line, function-local) per import."""
    path = FILES[module]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[tuple[str, int, bool]] = []

    def visit(node: ast.AST, local: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inner = local or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            if isinstance(child, ast.Import):
                for alias in child.names:
                    found.append((_resolve(alias.name) or alias.name, child.lineno, inner))
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    anchor = package.split(".")[: len(package.split(".")) - (child.level - 1)]
                    base = ".".join([*anchor, *([base] if base else [])])
                for alias in child.names:
                    target = _resolve(f"{base}.{alias.name}") or _resolve(base)
                    found.append((target or base, child.lineno, inner))
            visit(child, inner)

    visit(tree, False)
    return found


IMPORTS = {module: _imports(module) for module in sorted(MODULES)}


def _top(module: str) -> str:
    return module.split(".", 1)[0]


def _home(module: str) -> str:
    """The LAYERS entry a module belongs to (its subpackage, or its top-level package)."""
    return next(p for p in sorted(LAYERS, key=len, reverse=True) if module == p or module.startswith(p + "."))


def _layer(module: str) -> int:
    return LAYERS[_home(module)]


def _is_project(name: str) -> bool:
    return name in MODULES


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for module, imports in IMPORTS.items():
        for target, _, _ in imports:
            # `from pipeline import x` names the package too; a package's __init__ importing its own
            # modules is not an arrow back.
            if _is_project(target) and target != module and not module.startswith(target + "."):
                graph[module].add(target)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                connect(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(MODULES):
        if node not in index:
            connect(node)
    return found


def test_every_module_sits_in_a_subpackage():
    # The stages are the folders: a module left at the top of pipeline/ or explorer/ has no layer.
    loose = sorted(
        m
        for m, p in FILES.items()
        if m.count(".") == 1
        and p.name != "__init__.py"
        and _top(m) in ("pipeline", "explorer")
        and m != "pipeline.__main__"
    )
    assert not loose, f"modules outside the stage subpackages: {loose}"
    assert set(LAYERS) >= {_home(m) for m in MODULES}


def test_the_scan_sees_the_project():
    # A guard for the test itself: a resolver that missed every import would pass everything below.
    assert {"pipeline.cli.cli", "explorer.state.data", "pages.map", "app"} <= MODULES
    assert "pipeline.core.schema" in _graph()["pipeline.build.build"]


def test_imports_go_down_the_layers():
    upward = [
        f"{module}:{line} imports {target}"
        for module, imports in IMPORTS.items()
        for target, line, _ in imports
        if _is_project(target) and _home(target) != _home(module) and _layer(target) >= _layer(module)
    ]
    assert not upward, "imports that go up the layers, or across to a sibling subpackage (see LAYERS):\n" + "\n".join(
        upward
    )


def test_pages_are_imported_by_nobody():
    # st.navigation runs the pages by path; a page imported as a module would draw at import time.
    importers = sorted({m for m, imports in IMPORTS.items() for t, _, _ in imports if _top(t) == "pages"})
    assert not importers, importers


def test_no_import_cycles():
    cycles = _cycles(_graph())
    assert not cycles, "import circles (move the shared piece into a module below both):\n" + "\n".join(
        " <-> ".join(c) for c in cycles
    )


#: Project modules that are a heavy dependency's own wrapper, so importing them costs what importing
#: the dependency costs; like the dependency, they may be imported where they are used.
WRAPS_HEAVY = {
    # Subclasses BERTopic (importing it imports BERTopic: seconds), and the build imports
    # pipeline.model.represent at start, before it knows whether a model will be fitted or loaded.
    "pipeline.model.bertopic_adapter": "bertopic",
}


def test_project_modules_are_imported_at_the_top():
    local = [
        f"{module}:{line} imports {target} inside a function"
        for module, imports in IMPORTS.items()
        for target, line, inner in imports
        if inner and _is_project(target) and target not in WRAPS_HEAVY
    ]
    assert not local, "project imports hidden in functions (STYLE.md habit 7):\n" + "\n".join(local)


def test_streamlit_is_imported_only_by_the_ui():
    users = {m for m, imports in IMPORTS.items() for t, _, _ in imports if _top(t) == "streamlit"}
    ui = {m for m in MODULES if _top(m) in ("pages", "app") or m.startswith("explorer.ui.")}
    outside = users - ui
    assert not outside, f"modules that are not UI import streamlit: {sorted(outside)}"


def test_the_pipeline_never_imports_streamlit():
    users = sorted(
        m for m, imports in IMPORTS.items() if _top(m) == "pipeline" for t, _, _ in imports if _top(t) == "streamlit"
    )
    assert not users, users


def test_the_readme_maps_every_folder():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Where things are", 1)[1].split("\n## ", 1)[0]
    packages = {f"{_module_name(p.parent).replace('.', '/')}/" for m, p in FILES.items() if p.name == "__init__.py"}
    folders = {*packages, "pipeline/formats/", "pipeline/export/templates/", "pages/", "frontend/", "assets/", "tests/"}
    missing = sorted(f for f in folders if f.rsplit("/", 2)[-2] + "/" not in section)
    assert not missing, f"README's 'Where things are' does not name {missing}"


def test_only_app_py_imports_the_router():
    # explorer.ui.router draws the sidebar with every other UI module: anything below it importing it
    # would close a circle through them.
    importers = sorted({m for m, imports in IMPORTS.items() for t, _, _ in imports if t == "explorer.ui.router"})
    assert importers == ["app"], importers


def test_a_module_imported_lazily_for_its_weight_does_wrap_that_dependency():
    for module, dependency in WRAPS_HEAVY.items():
        assert dependency in {target for target, _, inner in IMPORTS[module] if not inner}, module


def test_no_module_imports_another_modules_private_names():
    # A name another module needs is part of its module's interface: give it a public name.
    private = []
    for module, path in FILES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and _top(node.module) in PACKAGES:
                private += [
                    f"{module}:{node.lineno} {node.module}.{a.name}" for a in node.names if a.name.startswith("_")
                ]
    assert not private, "private names imported from another module:\n" + "\n".join(private)


#: A module a reader can hold in their head, and functions that fit on a screen (issue 21).
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80


def test_no_module_is_longer_than_a_reader_can_hold():
    long = {m: n for m, p in FILES.items() if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert not long, f"modules over {MAX_MODULE_LINES} lines (split them along a seam): {long}"


def test_no_function_is_longer_than_a_screen():
    long = []
    for module, path in FILES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{module}:{node.lineno} {node.name} ({lines} lines)")
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines:\n" + "\n".join(long)
