"""Run .readthedocs.yaml's build jobs locally, as Read the Docs would; validate the file."""

import os
import subprocess
import zipfile
import sys
from pathlib import Path

import pytest
import yaml
from bs4 import BeautifulSoup
from pypdf import PdfReader
from conftest import readthedocs_commands

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "conf"))

from languages import LANGUAGES, from_readthedocs  # noqa: E402


def test_the_configuration_is_valid_for_read_the_docs():
    """Read the Docs' published v2 schema, and its rule that build.commands skips apt_packages."""
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "check_jsonschema",
            "--builtin-schema",
            "vendor.readthedocs",
            str(ROOT / ".readthedocs.yaml"),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    build = yaml.safe_load((ROOT / ".readthedocs.yaml").read_text("utf-8"))["build"]
    assert "texlive-xetex" in build["apt_packages"] and "commands" not in build
    assert set(build["jobs"]["build"]) == {"html", "pdf", "epub"}


def test_language_codes_are_mapped():
    assert from_readthedocs("zh-cn") == "zh_CN"
    assert from_readthedocs("zh-tw") == "zh_TW"
    assert from_readthedocs("en") == "en"
    with pytest.raises(ValueError, match="zh_CN"):
        from_readthedocs("zh_CN")


@pytest.mark.parametrize("lang", LANGUAGES, ids=lambda lang: lang.rtd)
def test_readthedocs_build(mini_site, tmp_path, lang):
    """The jobs of .readthedocs.yaml, on a copy of the mini site: HTML, PDF and EPUB.

    The PDF and EPUB jobs run for zh-tw alone (CJK fonts, the harder case):
    the others' jobs differ only in the language they pass, and the project's
    own PDFs and EPUBs of every language are the offline fixture's
    (tests/conftest.py).
    """
    offline = lang.rtd == "zh-tw"
    env = {
        **os.environ,
        "READTHEDOCS": "True",
        "READTHEDOCS_LANGUAGE": lang.rtd,
        "READTHEDOCS_VERSION": "latest",
        "READTHEDOCS_OUTPUT": str(tmp_path / "out"),
        "PATH": f"{ROOT / '.venv' / 'bin'}{os.pathsep}{os.environ['PATH']}",
    }
    for command in readthedocs_commands(pull_request=not offline):
        result = subprocess.run(command, shell=True, cwd=mini_site, env=env, capture_output=True, text=True)
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    html = tmp_path / "out" / "html"
    page = html / "auto_examples" / "plot_01_tiny.html"
    soup = BeautifulSoup(page.read_text("utf-8"), "html.parser")
    assert soup.html["lang"] == lang.html
    links = {a["hreflang"]: a["href"] for a in soup.select("nav.language-switcher a")}
    for other in LANGUAGES:
        if other != lang:
            # /<rtd>/latest/auto_examples/x.html -> ../../../<other>/latest/...
            assert links[other.html] == (f"../../../{other.rtd}/latest/auto_examples/plot_01_tiny.html")
    assert (html / "index.html").is_file() and (html / "404.html").is_file()
    not_found = (html / "404.html").read_text("utf-8")
    assert f"/{lang.rtd}/latest/_static/" in not_found
    # Read the Docs serves the one file in pdf/ and in epub/ as the downloads,
    # at the address the sidebar links to.
    downloads = {a.get_text(strip=True): a["href"] for a in soup.select(".offline-downloads a")}
    for fmt in ("pdf", "epub") if offline else ():
        files = list((tmp_path / "out" / fmt).iterdir())
        assert [f.name for f in files] == [f"data-parallelism-in-pytorch-{lang.sphinx}.{fmt}"]
        assert files[0].stat().st_size > 10_000
        if fmt == "pdf":  # a PDF a reader opens: pages, and the site's words on them
            text = "".join(page.extract_text() for page in PdfReader(files[0]).pages)
            assert soup.h1.get_text(strip=True).rstrip("¶#") in text
        else:  # an EPUB: a zip whose first member says so, stored uncompressed
            with zipfile.ZipFile(files[0]) as epub:
                first = epub.infolist()[0]
                assert (first.filename, epub.read(first)) == ("mimetype", b"application/epub+zip")
    for fmt in ("pdf", "epub"):
        assert downloads[fmt.upper()] == f"/_/downloads/{lang.rtd}/latest/{fmt}/"
