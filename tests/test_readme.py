"""The README a newcomer reads in ten minutes, and the guides under docs/ it sends each role to.

The README stays short, every link between it and the guides leads to a file and a heading
that exist (as GitHub renders them), and its table of targets is the Makefile's `make help`.
"""

import re
import subprocess
import unicodedata

import pytest

from conftest import ROOT

README = ROOT / "README.md"
DOCS = ROOT / "docs"
MAINTAINING = DOCS / "maintaining.md"
FENCE = re.compile(r"^(```|~~~)")
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
TARGET_CELL = re.compile(r"^\| ((?:`make [^`]+`(?:, )?)+) \|", re.MULTILINE)


def prose(path):
    """The lines of *path* outside fenced code, with inline code blanked (it holds no links)."""
    lines, fenced = [], False
    for line in path.read_text("utf-8").splitlines():
        if FENCE.match(line.strip()):
            fenced = not fenced
        elif not fenced:
            lines.append(re.sub(r"`[^`]*`", lambda code: "`" * len(code.group()), line))
    return lines


def anchors(path):
    """The anchors GitHub gives the headings of *path*: lowercase, punctuation dropped, spaces to
    hyphens, a repeated heading numbered (-1, -2 ...)."""
    seen, found = {}, set()
    lines, fenced = path.read_text("utf-8").splitlines(), False
    for line in lines:
        if FENCE.match(line.strip()):
            fenced = not fenced
            continue
        heading = re.match(r"^#{1,6} (.+?)\s*#*$", line)
        if fenced or not heading:
            continue
        text = heading.group(1).lower()
        slug = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LN").replace(" ", "-")
        found.add(f"{slug}-{seen[slug]}" if slug in seen else slug)
        seen[slug] = seen.get(slug, 0) + 1
    return found


def repository_guides():
    """The guides of docs/ the site does not publish (site_layout.REPOSITORY_GUIDES)."""
    from site_layout import REPOSITORY_GUIDES

    return REPOSITORY_GUIDES


def help_targets():
    """The targets `make help` lists, as the Makefile itself prints them."""
    run = subprocess.run(["make", "-s", "help"], cwd=ROOT, capture_output=True, text=True, check=True)
    return {line.split()[0] for line in run.stdout.splitlines() if line.strip()}


def table_targets(path):
    """The targets named in the first column of *path*'s tables (`make pdf`, `make epub` → both)."""
    cells = TARGET_CELL.findall(path.read_text("utf-8"))
    return {name.split()[1] for cell in cells for name in re.findall(r"`(make [^`]+)`", cell)}


def test_the_readme_is_read_in_ten_minutes():
    lines = README.read_text("utf-8").splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines: move the details into a guide under docs/"


@pytest.mark.parametrize("page", ["README.md", *(f"docs/{name}" for name in repository_guides())])
def test_every_link_between_the_readme_and_the_guides_leads_to_a_heading(page):
    path, broken = ROOT / page, []
    for number, line in enumerate(prose(ROOT / page), 1):
        for href in LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", href):  # https:, mailto: ...
                continue
            file, _, anchor = href.partition("#")
            target = (path.parent / file).resolve() if file else path
            if not target.is_file():
                broken.append(f"{page}: {href}: no file {target.relative_to(ROOT)}")
            elif anchor and anchor not in anchors(target):
                broken.append(f"{page}: {href}: no heading #{anchor} in {target.relative_to(ROOT)}")
    assert not broken, "\n".join(broken)


def test_the_guides_the_repository_keeps_exist_and_are_linked_from_the_readme():
    readme = README.read_text("utf-8")
    for name in repository_guides():
        assert (DOCS / name).is_file(), f"conf/conf.py excludes docs/{name}, which does not exist"
        assert f"(docs/{name}" in readme, f"README.md sends no one to docs/{name}"


def test_the_readme_and_the_maintainers_guide_list_exactly_the_targets_of_make_help():
    targets = help_targets()
    assert {"html", "test", "check", "gpu-check"} <= targets  # the help was read
    for path in (README, MAINTAINING):
        listed = table_targets(path)
        assert listed == targets, (
            f"{path.relative_to(ROOT)}: missing {sorted(targets - listed)}, not in make help {sorted(listed - targets)}"
        )
