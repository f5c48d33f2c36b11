"""What docs/architecture.md says of imports holds for every import statement of the packages: the core
imports no front end and not the planner, the planner no front end, and the front ends not each other."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# The parts the page names, each by a module prefix; the CLI is the one front end inside hms_catalog.
CLI = "hms_catalog.cli"
FRONT_ENDS = (CLI, "service", "spark_connector")
# For each part: the modules it must never import.
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "hms_catalog": ("planner", *FRONT_ENDS),
    "planner": FRONT_ENDS,
    CLI: ("planner", "service", "spark_connector"),
    "service": (CLI, "spark_connector"),
    "spark_connector": (CLI, "service"),
}
# Programs that live in the core's package but are not the core: the demo renders with the CLI's renderer.
NOT_CORE = (CLI, "hms_catalog.demo")


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def _part(module: str) -> str:
    if _within(module, CLI):
        return CLI
    return module.split(".", 1)[0]


def _imports(path: Path) -> Iterator[tuple[int, str]]:
    """Every module an import statement of the file names, wherever it sits (functions and TYPE_CHECKING too)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.lineno, node.module
            for alias in node.names:  # from hms_catalog import cli
                yield node.lineno, f"{node.module}.{alias.name}"


def _sources() -> list[Path]:
    return sorted(path for package in ("hms_catalog", "planner", "service", "spark_connector") for path in (ROOT / package).rglob("*.py"))


def test_the_packages_are_found() -> None:
    modules = {_part(_module(path)) for path in _sources()}
    assert modules >= set(FORBIDDEN)


@pytest.mark.parametrize("part", sorted(FORBIDDEN))
def test_no_part_imports_what_the_architecture_page_forbids(part: str) -> None:
    broken = []
    for path in _sources():
        module = _module(path)
        if _part(module) != part or (part == "hms_catalog" and any(_within(module, other) for other in NOT_CORE)):
            continue
        for line, imported in _imports(path):
            if any(_within(imported, forbidden) for forbidden in FORBIDDEN[part]):
                broken.append(f"{path.relative_to(ROOT)}:{line} imports {imported}")
    assert not broken, "\n".join(broken)


def _core_part(module: str) -> str | None:
    """The core package (``hms_catalog.write.commit`` -> ``write``) or top-level module (``properties``) of a
    module; None for the package's own ``__init__``, the programs (:data:`NOT_CORE`) and anything outside."""
    parts = module.split(".")
    if parts[0] != "hms_catalog" or len(parts) < 2 or any(_within(module, other) for other in NOT_CORE):
        return None
    return parts[1]


def _core_imports() -> dict[tuple[str, str], list[str]]:
    """Each import of one core part by another: (importer, imported) -> the import sites."""
    sources = [path for path in _sources() if _core_part(_module(path)) is not None]
    parts = {_core_part(_module(path)) for path in sources}
    sites: dict[tuple[str, str], list[str]] = {}
    for path in sources:
        importer = _core_part(_module(path))
        for line, imported in _imports(path):
            target = _core_part(imported)
            if importer is not None and target in parts and target != importer:
                site = f"{path.relative_to(ROOT)}:{line}"
                known = sites.setdefault((importer, target), [])
                if not any(each.startswith(site + " ") for each in known):  # one line per statement, not per name
                    known.append(f"{site} imports {imported}")
    return sites


def _cycles(edges: set[tuple[str, str]]) -> list[list[str]]:
    """The parts that import each other, directly or through others: the graph's strongly connected
    components of more than one part (Tarjan's), each sorted."""
    graph: dict[str, list[str]] = {}
    for source, target in sorted(edges):
        graph.setdefault(source, []).append(target)
        graph.setdefault(target, [])
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in graph[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def _described(component: list[str], sites: dict[tuple[str, str], list[str]]) -> str:
    """One cycle's parts and every import between them that closes it, by file and line."""
    lines = [f"core parts that import each other: {' <-> '.join(component)}"]
    for source, target in sorted(sites):
        if source in component and target in component:
            lines.append(f"  {source} -> {target}:")
            lines.extend(f"    {site}" for site in sites[(source, target)])
    return "\n".join(lines)


def test_the_cycle_check_finds_a_cycle_and_names_its_imports() -> None:
    sites = {("a", "b"): ["a.py:1 imports b"], ("b", "c"): ["b.py:2 imports c"], ("c", "a"): ["c.py:3 imports a"],
             ("c", "d"): ["c.py:4 imports d"]}
    assert _cycles(set(sites)) == [["a", "b", "c"]]
    assert "c.py:3 imports a" in _described(["a", "b", "c"], sites) and "c.py:4" not in _described(["a", "b", "c"], sites)


def test_no_two_core_packages_import_each_other() -> None:
    """The core's packages and top-level modules form no cycle, counting every import statement (in functions
    and under TYPE_CHECKING too): each can be read, tested and changed with only what is below it. The
    file operations live in the storage package for this reason (docs/architecture.md)."""
    sites = _core_imports()
    assert {"write", "commits", "storage", "properties", "client"} <= {part for edge in sites for part in edge}
    cycles = _cycles(set(sites))
    assert not cycles, "\n".join(_described(component, sites) for component in cycles)
