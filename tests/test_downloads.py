"""A reader's download runs on its own: empty folder, only torch installed."""

import json
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from bs4 import BeautifulSoup, SoupStrainer

EXAMPLES = ["plot_01_dataparallel", "plot_02_dataparallel_in_depth"]


def requirement_closure(name):
    """Distributions *name* needs at run time (no extras), itself included."""
    seen, todo = set(), [name]
    while todo:
        dist = metadata.distribution(todo.pop())
        if dist.metadata["Name"].lower() in seen:
            continue
        seen.add(dist.metadata["Name"].lower())
        for req in dist.requires or []:
            if "extra ==" in req:
                continue
            todo.append(re.split(r"[ ;<>=!~\[(]", req, maxsplit=1)[0])
    return seen


@pytest.fixture(scope="module")
def torch_only(tmp_path_factory):
    """A folder exposing only torch and its own requirements to `python -S`."""
    folder = tmp_path_factory.mktemp("torch-only")
    for name in requirement_closure("torch"):
        dist = metadata.distribution(name)
        tops = {Path(str(f)).parts[0] for f in dist.files or []}
        for top in tops:
            source = Path(dist.locate_file(top))
            if top.endswith((".dist-info", "__pycache__")) or not source.exists():
                continue
            if source.is_dir() or source.suffix in (".py", ".so"):
                target = folder / top
                if not target.exists():
                    target.symlink_to(source)
    assert (folder / "torch").exists() and not (folder / "matplotlib").exists()
    return folder


def run_isolated(torch_only, workdir, script):
    """Run *script* in *workdir* with no site-packages but torch's closure."""
    bootstrap = (
        f"import sys; sys.path.insert(0, {str(torch_only)!r}); "
        f"import runpy; runpy.run_path({script!r}, run_name='__main__')"
    )
    return subprocess.run(
        [sys.executable, "-S", "-c", bootstrap],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=300,
    )


def download_link(site, example, suffix):
    """The file a reader gets from the page's download button."""
    page = site / "en" / "auto_examples" / f"{example}.html"
    links = BeautifulSoup(page.read_text("utf-8"), "html.parser", parse_only=SoupStrainer("a"))
    for link in links.select("a.download"):
        if link["href"].endswith(suffix):
            return (page.parent / link["href"]).resolve()
    raise AssertionError(f"no {suffix} download link on {page}")


@pytest.mark.parametrize("example", EXAMPLES)
def test_downloaded_script_runs_with_only_torch(site, torch_only, tmp_path, example):
    script = tmp_path / f"{example}.py"
    script.write_bytes(download_link(site, example, ".py").read_bytes())
    result = run_isolated(torch_only, tmp_path, str(script))
    assert result.returncode == 0, result.stderr[-3000:]
    assert "Traceback" not in result.stderr
    if example == "plot_01_dataparallel":
        assert "Outside: input size torch.Size([10, 5])" in result.stdout
        assert "matplotlib is not installed" in result.stdout


@pytest.mark.parametrize("example", EXAMPLES)
def test_downloaded_notebook_code_runs_with_only_torch(site, torch_only, tmp_path, example):
    notebook = json.loads(download_link(site, example, ".ipynb").read_text("utf-8"))
    cells = ["".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "code"]
    assert cells, "notebook has no code"
    script = tmp_path / "notebook_code.py"
    script.write_text("\n\n".join(cells), "utf-8")
    result = run_isolated(torch_only, tmp_path, str(script))
    assert result.returncode == 0, result.stderr[-3000:]


@pytest.mark.parametrize("lang", ["zh_CN", "zh_TW"])
def test_downloads_are_linked_in_every_language(site, lang):
    for example in EXAMPLES:
        page = site / lang / "auto_examples" / f"{example}.html"
        soup = BeautifulSoup(page.read_text("utf-8"), "html.parser")
        hrefs = [a["href"] for a in soup.select("a.download")]
        for suffix in (".py", ".ipynb"):
            matches = [h for h in hrefs if h.endswith(example + suffix)]
            assert matches and (page.parent / matches[0]).resolve().is_file(), suffix
