"""The offline copies: one PDF and one EPUB per language (``make pdf``, ``make epub``).

The expected text comes from the executed gallery and the built HTML site,
never from a copy of an earlier run: the page titles each language's site
shows, and the output lines the 8-GPU (8-process) runs printed.
"""

import functools
import re
import subprocess
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from conftest import copy_project
from conftest import run_module
from fontTools.ttLib import TTCollection
from languages import LANGUAGES
from pypdf import PdfReader
from catalogs.po import read  # conf/ is on sys.path

ROOT = Path(__file__).resolve().parent.parent
SHOTS = ROOT / "_build" / "screenshots"
# The pages in the offline copies: those of the landing page's toctrees.
PAGES = [
    "auto_examples/plot_01_dataparallel",
    "auto_examples/plot_02_dataparallel_in_depth",
    "auto_examples/plot_03_distributed_data_parallel",
    "translating",
    "translation-status",
]
TABBED = ["plot_01_dataparallel", "plot_03_distributed_data_parallel"]
CJK_REGION = {"zh_CN": "sc", "zh_TW": "tc"}


def squeeze(text):
    """Drop all whitespace, so that line breaks and indents do not matter."""
    return re.sub(r"\s+", "", text)


@functools.cache
def pdf_text(path):
    """The PDF's text, pages separated by form feeds (read once per file)."""
    return subprocess.run(["pdftotext", str(path), "-"], capture_output=True, text=True, check=True).stdout


@functools.cache
def page_title(site, lang, page):
    """The <h1> of *page*, as *lang*'s site shows it (read once per worker)."""
    soup = BeautifulSoup((site / lang / f"{page}.html").read_text("utf-8"), "html.parser")
    h1 = soup.select_one("article h1")
    for link in h1.select("a.headerlink"):
        link.decompose()
    return h1.get_text(" ", strip=True)


def page_titles(site, lang):
    """The titles of the pages of the offline copies, in *lang*."""
    return [page_title(site, lang, page) for page in PAGES]


def gpu_results(example, lang):
    """Return ``[(tab label, output lines)]`` of the example's GPU tabs, in order.

    Read from the built page of *lang*, which shows what the PDF shows: this
    build's own output, or a committed recording's where one matches.
    """
    page = ROOT / "_build" / "html" / lang / "auto_examples" / f"{example}.html"
    tabs = BeautifulSoup(page.read_text("utf-8"), "html.parser").select_one(".gpu-tab-set")
    results = []
    for label in tabs.find_all("label", class_="sd-tab-label", recursive=False):
        content = label.find_next_sibling("div", class_="sd-tab-content")
        lines = [
            line
            for pre in content.select(".sphx-glr-script-out pre")
            for line in pre.get_text().splitlines()
            if line.strip()
        ]
        results.append((label.get_text().strip(), lines))
    return results


def translated(lang, msgid):
    """*msgid* from the site's interface catalog (sphinx.po) in *lang*."""
    if lang == "en":
        return msgid
    entry = read(ROOT / "locale" / lang / "LC_MESSAGES" / "sphinx.po").get(msgid)
    return entry.string


# -- PDF ------------------------------------------------------------------------


@pytest.mark.parametrize("lang", [lang.sphinx for lang in LANGUAGES])
def test_pdf_has_the_translated_titles_and_interface(offline, site, lang):
    path = offline["pdf", lang]
    assert path.name == f"data-parallelism-in-pytorch-{lang}.pdf"
    text = squeeze(pdf_text(path))
    for title in page_titles(site, lang):
        assert squeeze(title) in text, title
    assert squeeze(translated(lang, "Out:")) in text  # the site's output label
    if lang != "en":  # no hidden English copies of the paragraphs made it to paper
        for title in page_titles(site, "en")[:3]:
            assert squeeze(title) not in text, title
    info = subprocess.run(["pdfinfo", str(path)], capture_output=True, text=True).stdout
    home = re.escape(page_title(site, lang, "index"))
    assert re.search(rf"^Title:\s+{home}$", info, re.M), info


@pytest.mark.parametrize("example", TABBED)
@pytest.mark.parametrize("lang", [lang.sphinx for lang in LANGUAGES])
def test_pdf_shows_every_gpu_count_in_order(offline, lang, example):
    """The tabs become sections one after another; all 8-GPU output lines are there."""
    text = squeeze(pdf_text(offline["pdf", lang]))
    results = gpu_results(example, lang)
    assert [heading.split()[0] for heading, _ in results] == ["1", "2", "3", "8"]
    position = 0
    for heading, output in results:
        assert output, f"{example}: no output under {heading!r}"
        # The first line of each run is its provenance label, or its first line.
        position = text.index(squeeze(output[0]), position)
    eight = results[-1][1]
    for line in eight:
        assert squeeze(line) in text, line


@pytest.mark.parametrize("lang", [lang.sphinx for lang in LANGUAGES])
def test_pdf_fonts_are_embedded(offline, lang):
    report = subprocess.run(
        ["pdffonts", str(offline["pdf", lang])], capture_output=True, text=True, check=True
    ).stdout.splitlines()[2:]
    fonts = {line.split()[0].split("+")[-1]: line.split() for line in report}
    assert fonts and all(row[-5] == "yes" for row in fonts.values()), report  # emb column
    if lang != "en":
        assert any(name.startswith("NotoSerifCJK") for name in fonts), report
        assert any(name.startswith("NotoSansCJK") for name in fonts), report


def installed_faces():
    """Map each installed font's PostScript name to its file and face index."""
    out = subprocess.run(
        ["fc-list", "-f", "%{postscriptname}|%{file}|%{index}\n"], capture_output=True, text=True, check=True
    ).stdout
    faces = {}
    for line in out.splitlines():
        name, file, index = line.split("|")
        faces[name] = (file, int(index))
    return faces


def to_unicode(data):
    """Map CIDs to text from a PDF ToUnicode CMap (bfchar and bfrange entries)."""
    cids = {}
    hexes = rb"<([0-9A-Fa-f]+)>\s*"
    for block in re.findall(rb"beginbfchar(.*?)endbfchar", data, re.S):
        for cid, text in re.findall(hexes * 2, block):
            cids[int(cid, 16)] = bytes.fromhex(text.decode()).decode("utf-16-be")
    for block in re.findall(rb"beginbfrange(.*?)endbfrange", data, re.S):
        for low, high, text in re.findall(hexes * 3, block):
            for offset, cid in enumerate(range(int(low, 16), int(high, 16) + 1)):
                cids[cid] = chr(int(text, 16) + offset)
    return cids


@pytest.mark.parametrize("lang", sorted(CJK_REGION))
def test_pdf_draws_chinese_with_the_regional_glyphs(offline, lang):
    """Each character drawn differently in SC and TC uses the language's region's glyph.

    All Noto CJK regions share one glyph set in the font collection, so
    pdffonts names every one ``NotoSerifCJKjp``; the region shows in which glyph
    (CID) the PDF uses for a character: the SC font's or the TC font's.
    """
    faces, glyph_ids, votes = installed_faces(), {}, {"sc": 0, "tc": 0, "neither": 0}

    def cmap(psname):
        if psname not in glyph_ids:
            font = TTCollection(faces[psname][0], lazy=True)[faces[psname][1]]
            glyph_ids[psname] = {cp: font.getGlyphID(g) for cp, g in font.getBestCmap().items()}
        return glyph_ids[psname]

    for page in PdfReader(offline["pdf", lang]).pages:
        for font in page["/Resources"].get("/Font", {}).values():
            font = font.get_object()
            base = str(font["/BaseFont"]).split("+")[-1].removesuffix("-Identity-H")
            if "CJK" not in base or "/ToUnicode" not in font:
                continue
            sc, tc = cmap(base.replace("jp", "sc")), cmap(base.replace("jp", "tc"))
            for cid, text in to_unicode(font["/ToUnicode"].get_object().get_data()).items():
                if len(text) == 1 and sc.get(ord(text)) != tc.get(ord(text)):
                    region = {sc.get(ord(text)): "sc", tc.get(ord(text)): "tc"}.get(cid)
                    votes[region or "neither"] += 1
    other = "tc" if CJK_REGION[lang] == "sc" else "sc"
    assert votes[CJK_REGION[lang]] > 50 and votes[other] == 0 and votes["neither"] == 0, votes


@pytest.mark.parametrize("lang", [lang.sphinx for lang in LANGUAGES])
def test_pdf_lines_stay_on_the_page(offline, lang):
    """Long code and output lines wrap: no word reaches into the page's outer half inch."""
    bbox = subprocess.run(
        ["pdftotext", "-bbox", str(offline["pdf", lang]), "-"], capture_output=True, text=True, check=True
    ).stdout
    width = float(re.search(r'<page width="([\d.]+)"', bbox)[1])
    words = re.findall(r'<word xMin="([\d.]+)" yMin="[\d.]+" xMax="([\d.]+)"[^>]*>([^<]*)', bbox)
    outside = [(word, x1) for x0, x1, word in words if float(x0) < 36 or float(x1) > width - 36]
    assert not outside, outside[:10]


@pytest.mark.parametrize("lang", [lang.sphinx for lang in LANGUAGES])
def test_pdf_results_page_renders(offline, lang):
    """Render the page with the 8-GPU results to PNG (kept under _build/screenshots)."""
    pages = pdf_text(offline["pdf", lang]).split("\f")
    label = gpu_results("plot_01_dataparallel", lang)[-1][1][0]
    number = next(i for i, page in enumerate(pages, 1) if squeeze(label) in squeeze(page))
    SHOTS.mkdir(parents=True, exist_ok=True)
    stem = SHOTS / f"offline-{lang}-page-{number}"
    subprocess.run(
        [
            "pdftoppm",
            "-png",
            "-r",
            "80",
            "-f",
            str(number),
            "-l",
            str(number),
            "-singlefile",
            str(offline["pdf", lang]),
            str(stem),
        ],
        check=True,
    )
    png = stem.with_suffix(".png").read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 20_000  # a page of text, not a blank


# -- EPUB -----------------------------------------------------------------------

NS = {
    "opf": "http://www.idpf.org/2007/opf",
    "dc": "http://purl.org/dc/elements/1.1/",
    "c": "urn:oasis:names:tc:opendocument:xmlns:container",
}


@pytest.mark.parametrize("lang", LANGUAGES, ids=lambda lang: lang.sphinx)
def test_epub_is_a_valid_package_with_the_titles(offline, site, lang):
    path = offline["epub", lang.sphinx]
    assert path.name == f"data-parallelism-in-pytorch-{lang.sphinx}.epub"
    assert zipfile.is_zipfile(path)
    with zipfile.ZipFile(path) as epub:
        assert epub.testzip() is None
        first = epub.infolist()[0]  # the EPUB rules: mimetype first, stored
        assert first.filename == "mimetype" and first.compress_type == zipfile.ZIP_STORED
        assert epub.read("mimetype") == b"application/epub+zip"
        container = ET.fromstring(epub.read("META-INF/container.xml"))
        opf_name = container.find(".//c:rootfile", NS).get("full-path")
        opf = ET.fromstring(epub.read(opf_name))
        assert opf.find(".//dc:language", NS).text == lang.html
        base = str(Path(opf_name).parent).replace(".", "")
        manifest = {item.get("id"): item for item in opf.iterfind(".//opf:manifest/opf:item", NS)}
        names = set(epub.namelist())
        for item in manifest.values():
            assert str(Path(base, item.get("href"))) in names, item.get("href")
        nav = [item for item in manifest.values() if "nav" in (item.get("properties") or "")]
        assert len(nav) == 1
        nav_text = epub.read(str(Path(base, nav[0].get("href")))).decode("utf-8")
        assert 'epub:type="toc"' in nav_text
        spine = [
            manifest[ref.get("idref")].get("href") for ref in opf.iterfind(".//opf:spine/opf:itemref", NS)
        ]
        pages = {href: epub.read(str(Path(base, href))).decode("utf-8") for href in spine}
    text = squeeze(" ".join(BeautifulSoup(p, "html.parser").get_text(" ") for p in pages.values()))
    for title in page_titles(site, lang.sphinx):
        assert squeeze(title) in text, title
        assert squeeze(title) in squeeze(BeautifulSoup(nav_text, "html.parser").get_text(" "))
    tutorial = pages["auto_examples/plot_01_dataparallel.xhtml"]
    assert "language-switcher" not in tutorial and "bilingual-en" not in tutorial
    assert "sd-tab" not in tutorial  # the GPU results are sections, one after another
    assert "sphx-glr-footer" not in tutorial  # no download buttons without downloads
    for line in gpu_results("plot_01_dataparallel", lang.sphinx)[-1][1]:
        assert squeeze(line) in text, line


# -- The site's links and the failures ------------------------------------------------


@pytest.mark.parametrize("lang", [lang.sphinx for lang in LANGUAGES])
def test_site_links_its_languages_copies(offline, site, lang):
    for page in ("index", "auto_examples/plot_01_dataparallel"):
        page_file = site / lang / f"{page}.html"
        soup = BeautifulSoup(page_file.read_text("utf-8"), "html.parser")
        box = soup.select_one(".sidebar-drawer .offline-downloads")
        assert box is not None and translated(lang, "Read offline:") in box.get_text()
        links = {a.get_text(strip=True): a["href"] for a in box.select("a")}
        for fmt in ("pdf", "epub"):  # beside the pages: served with them
            target = (page_file.parent / links[fmt.upper()]).resolve()
            assert target.is_relative_to(site / lang), target
            assert target.read_bytes() == offline[fmt, lang].read_bytes()


@pytest.fixture
def project(site, tmp_path):
    """A project copy with the executed gallery (built after the site, so it is current)."""
    return copy_project(tmp_path / "project")


def test_missing_glyph_fails_naming_character_and_page(project):
    """A character no font has stops the PDF; the last good PDF stays."""
    old = project / "_build" / "pdf" / "en" / "data-parallelism-in-pytorch-en.pdf"
    old.parent.mkdir(parents=True)
    old.write_bytes(b"%PDF last good copy")
    page = project / "docs" / "translating.md"
    page.write_text(page.read_text("utf-8") + "\nThe hieroglyph \U00013000 has no font here.\n", "utf-8")
    result = run_module(project, "build.offline", "pdf", "en")
    output = result.stdout + result.stderr
    assert result.returncode == 1, output[-3000:]
    message = next(line for line in output.splitlines() if "missing character" in line)
    assert "\U00013000" in message and "U+13000" in message
    assert re.search(r"page \d+ of the PDF \(translating,", message), message
    assert old.read_bytes() == b"%PDF last good copy"


def test_stale_gallery_is_refused_without_running_examples(site, tmp_path):
    project = copy_project(tmp_path / "project", with_gallery=False)
    result = run_module(project, "build.offline", "epub", "zh_TW")
    assert result.returncode == 1
    assert "make html" in result.stderr and "plot_01_dataparallel" in result.stderr
    assert not (project / "docs" / "auto_examples").exists()
    assert not (project / "_build" / "epub").exists()


@pytest.mark.parametrize("lang", [lang.sphinx for lang in LANGUAGES])
def test_pdf_figures_are_the_pages_figures(offline, site, lang, tmp_path):
    """A Chinese PDF draws the translated figures its pages show; the English PDF the English."""
    from PIL import Image

    def pixels(path):
        with Image.open(path) as image:
            return image.convert("RGB").tobytes()

    subprocess.run(["pdfimages", "-png", str(offline["pdf", lang]), str(tmp_path / "image")], check=True)
    embedded = [pixels(p) for p in sorted(tmp_path.glob("image-*.png"))]
    shown = []
    for html in sorted((site / lang / "auto_examples").glob("plot_*.html")):
        soup = BeautifulSoup(html.read_text("utf-8"), "html.parser")
        shown += [
            (html.parent / img["src"]).resolve()
            for img in soup.select("article img")
            if "sphx_glr_" in img["src"]
        ]
    english = [pixels(p) for p in sorted((ROOT / "docs" / "auto_examples" / "images").glob("*.png"))]
    assert shown and all(pixels(png) in embedded for png in shown)
    if lang != "en":
        assert not any(figure in embedded for figure in english)
