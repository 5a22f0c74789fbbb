"""A mistyped reference target in a translation (issue 65): make html and the live preview (the
same Sphinx run) report it at the catalog's line, never at the generated docs/auto_examples/*.rst
no translator edits; make check's fix keeps the English target and the translator's own title."""

import re

from conftest import mini_copy, run_module
from catalogs.po import messages, read, write

CATALOG = "locale/zh_TW/LC_MESSAGES/auto_examples/plot_01_tiny.po"


def mistype(po, titled=True):
    """Mistype the target of the first translated reference with a title in *po*; without
    *titled*, write the mistyped target alone. Return (English target, typo, title, line)."""
    catalog = read(po)
    message = next(m for m in messages(catalog) if re.search(r":ref:`[^`]+ <[^`]+>`", m.string))
    title, target = re.search(r":ref:`([^`]+?) <([^`]+)>`", message.string).groups()
    typo = target.replace(".py", "y.py") if target.endswith(".py") else target + "x"
    role = f":ref:`{title} <{typo}>`" if titled else f":ref:`{typo}`"
    message.string = message.string.replace(f":ref:`{title} <{target}>`", role)
    write(catalog, po)
    line = next(n for n, text in enumerate(po.read_text("utf-8").split("\n"), 1) if typo in text)
    return target, typo, title, line


def test_a_mistyped_target_is_reported_at_the_catalog_line(tmp_path):
    project = mini_copy(tmp_path / "project")
    po = project / CATALOG
    target, typo, title, line = mistype(po)
    result = run_module(project, "build.site", "html", "zh_TW", timeout=600)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output[-3000:]
    said = [text for text in output.splitlines() if typo in text and "WARNING" in text]
    # Sphinx's two: Locale's "inconsistent term references" and the std domain's "undefined label".
    assert any("undefined label" in text for text in said) and any("inconsistent" in text for text in said), (
        said
    )
    for text in said:
        assert text.startswith(f"{po}:{line}: WARNING: "), text
        assert "keep the English's target" in text, text
    assert "auto_examples/plot_01_tiny.rst" not in output, output[-3000:]

    check = run_module(project, "gate.run_checks", "zh_TW")
    found = [text for text in check.stdout.splitlines() if "[references]" in text]
    assert check.returncode == 1 and found, check.stdout + check.stderr
    assert found[0].startswith(f"{CATALOG}:{line}: "), found
    assert found[0].endswith(f"keep the English's target: :ref:`{title} <{target}>`"), found


def test_make_check_never_suggests_the_typo_as_the_title(tmp_path):
    """``:ref:`typo``` alone: the fix is the English's role, or a title of one's own, not
    ``:ref:`typo <target>``` (which would show the typo as the link's words)."""
    project = mini_copy(tmp_path / "project")
    target, typo, title, line = mistype(project / CATALOG, titled=False)
    check = run_module(project, "gate.run_checks", "zh_TW")
    found = [text for text in check.stdout.splitlines() if "[references]" in text]
    assert check.returncode == 1 and found, check.stdout + check.stderr
    fix = found[0].split("keep the English's target: ", 1)[1]
    assert f"{typo} <" not in fix and f"<{target}>`" in fix, found
    english = next(m.id for m in messages(read(project / CATALOG)) if typo in m.string)
    english_role = re.search(rf":ref:`[^`]*<{re.escape(target)}>`", english)[0]
    assert fix.startswith(english_role) and f":ref:`TITLE <{target}>`" in fix, found
