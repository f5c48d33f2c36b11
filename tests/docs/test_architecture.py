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
