"""The documentation site: it builds under ``--strict`` (a broken link or anchor fails), keeps a page per
subject, loads nothing from another host, and the README stays short and points at pages that exist."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from html import unescape
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
README_LIMIT = 15 * 1024

# Each page of the site and headings it must keep: the README's former sections, so none is lost.
SUBJECTS: dict[str, tuple[str, ...]] = {
    "index": ("hms-catalog",),
    "getting-started": ("Quickstart", "Pointing it at your own metastore"),
    "python": ("Python", "The embedded metastore"),
    "statements": ("Statements", "Changing the catalog (DDL)"),
    "catalog-properties": ("Catalog properties",),
    "table-formats": ("Table formats",),
    "filesystem-catalogs": ("Filesystem catalogs: folders become tables",),
    "storage": ("Storage: S3, HDFS, GCS and ADLS", "What is tested, and what is not"),
    "caches": ("Caches, and what you can rely on", "Following metastore events", "Versions and the change log"),
    "planning": ("Split planning",),
    "pyspark": ("PySpark",),
    "spark-connector": ("Spark connector: our catalogs as Spark catalogs", "Writing through the catalog",
                        "SELECT without the start-up bill"),
    "service": ("The catalog service",),
    "api": ("REST API", "The OpenAPI document", "Endpoints", "Errors"),
    "console": ("The web console", "Opening it", "What each view shows", "Read-only tokens"),
    "replicas": ("Replicas on a shared store",),
    "thrift-endpoint": ("The service as a Hive Metastore", "Federation: one metastore over many catalogs",
                        "Security", "Configuring clients", "Measured"),
    "iceberg-rest": ("The service as an Iceberg REST catalog", "Clients", "What is served", "Auth", "Not yet"),
    "kerberos": ("Kerberos",),
    "metastore-versions": ("Metastore versions",),
    "security": ("Security", "Secrets"),
    "measurements": ("Measured",),
    "architecture": ("Architecture", "Which may import which"),
    "layout": ("Layout",),
}


def _mkdocs_missing() -> bool:
    return any(importlib.util.find_spec(name) is None for name in ("mkdocs", "material"))


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site as ``make docs`` builds it, into a temporary folder."""
    if _mkdocs_missing():
        if os.environ.get("CI"):
            pytest.fail("mkdocs and mkdocs-material are missing: the docs extra is not installed (pip install -e '.[docs]')")
        pytest.skip("the docs extra is not installed: pip install -e '.[docs]'")
    out = tmp_path_factory.mktemp("site")
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(ROOT / "mkdocs.yml"), "--site-dir", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=300, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert built.returncode == 0, f"mkdocs build --strict failed:\n{built.stdout}\n{built.stderr}"
    return out


def _page(site: Path, name: str) -> Path:
    return site / "index.html" if name == "index" else site / name / "index.html"


class _Resources(HTMLParser):
    """The URLs a page loads by itself: scripts, stylesheets, icons, fonts, images, frames."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        attribute = {"script": "src", "link": "href", "img": "src", "iframe": "src", "source": "src"}.get(tag)
        if attribute and values.get(attribute):
            self.urls.append(values[attribute] or "")


def _is_external(url: str) -> bool:
    parts = urlsplit(url)
    return bool(parts.scheme in ("http", "https") or parts.netloc)


def test_the_site_builds_strictly_with_a_page_per_subject(site: Path) -> None:
    for name, headings in SUBJECTS.items():
        page = _page(site, name)
        assert page.is_file(), f"no page {name}"
        html = page.read_text(encoding="utf-8")
        shown = {unescape(re.sub(r"<[^>]+>", "", h)).rstrip("¶").strip() for h in re.findall(r"<h[1-3][^>]*>(.*?)</h[1-3]>", html, re.S)}
        for heading in headings:
            assert heading in shown, f"{name}: no heading {heading!r} (has {sorted(shown)})"


def test_every_page_in_docs_is_a_subject() -> None:
    """A new page is added to SUBJECTS (and so to the test above) as well as to the nav of mkdocs.yml."""
    pages = {path.stem for path in DOCS.glob("*.md")}
    assert pages == set(SUBJECTS)
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for name in pages:
        assert f" {name}.md" in nav, f"{name}.md is not in the nav of mkdocs.yml"


def test_the_site_loads_nothing_from_another_host(site: Path) -> None:
    """No CDN and no web fonts: scripts, stylesheets and the rest come from the site itself."""
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > len(SUBJECTS)
    for page in pages:
        parser = _Resources()
        parser.feed(page.read_text(encoding="utf-8"))
        assert parser.urls, f"{page} loads nothing: the parser missed its tags"
        external = [url for url in parser.urls if _is_external(url)]
        assert not external, f"{page.relative_to(site)} loads {external}"
    for sheet in site.rglob("*.css"):
        text = sheet.read_text(encoding="utf-8")
        assert not re.search(r"""(@import|url\()\s*["']?(https?:)?//""", text), f"{sheet.relative_to(site)} loads from another host"


def test_the_readme_is_short_and_links_to_every_page() -> None:
    text = README.read_text(encoding="utf-8")
    assert text.startswith("# hms-catalog\n")
    size = len(text.encode("utf-8"))
    assert size < README_LIMIT, f"README.md is {size} bytes; the limit is {README_LIMIT}: move the detail to docs/"
    targets = [target for target in re.findall(r"\]\(([^)\s]+)\)", text) if not _is_external(target)]
    for target in targets:
        path = target.split("#", 1)[0]
        assert (ROOT / path).exists(), f"README.md links to {target}, which does not exist"
    linked = {Path(target.split("#", 1)[0]).stem for target in targets if target.startswith("docs/")}
    assert linked >= set(SUBJECTS), f"README.md does not link to {sorted(set(SUBJECTS) - linked)}"
