"""make check's recordings check: what makes CI say "a committed recording went stale", in seconds.

On a copy of the project: a one-word prose edit of a recorded example passes;
a line of code added fails, at that line, saying what was recorded there and
what to do; a recording the build cannot verify fails at its own file.
"""

import ast
import re
import time
from pathlib import Path

import pytest

from conftest import copy_project, run_module
from extensions.recordings import committed, trusted_keys, verified
from gate.findings import brief
from gate.recordings import first_difference
from gate.run_checks import CHECKS, PROJECT_CHECKS, main

RECORDED = [
    (Path(path), name) for path in committed() for name in sorted(verified(path, trusted_keys())["examples"])
]
pytestmark = pytest.mark.skipif(not RECORDED, reason="no recording is committed in conf/recordings/")


@pytest.fixture
def project(tmp_path):
    return copy_project(tmp_path / "project", with_gallery=False)


def check(project):
    """make check's recordings check in *project*: (exit code, its problem lines, seconds)."""
    start = time.monotonic()
    done = run_module(project, "gate.run_checks", "--check", "recordings", timeout=300)
    lines = [line for line in done.stdout.splitlines() if "[recordings]" in line]
    return done.returncode, lines, time.monotonic() - start


def statements(source):
    """The lines where *source*'s top-level statements after its docstring start."""
    return [node.lineno for node in ast.parse(source).body[1:]]


def test_make_check_runs_the_recordings_check_by_default(capsys):
    assert "recordings" in PROJECT_CHECKS and "recordings" not in CHECKS  # not per catalog
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "recordings (gate/recordings.py)" in capsys.readouterr().out


@pytest.mark.parametrize(("recording", "name"), RECORDED)
def test_a_prose_edit_keeps_a_recording_and_a_code_edit_is_reported_at_its_line(project, recording, name):
    example = project / "examples" / name
    original = example.read_text("utf-8")
    closing = original.index('"""', original.index('"""') + 3)
    example.write_text(original[: closing - 1] + " Also" + original[closing - 1 :], "utf-8")  # one word
    assert check(project)[:2] == (0, [])

    lines = original.splitlines(keepends=True)
    at = statements(original)[len(statements(original)) // 2]  # a statement mid-file
    lines.insert(at - 1, 'print("one more line")\n')
    example.write_text("".join(lines), "utf-8")
    code, problems, seconds = check(project)
    assert code == 1 and len(problems) == 1, problems
    where, message = problems[0].split(" [recordings] ")
    assert where == f"examples/{name}:{at}:"
    assert f"(it recorded {brief(original.splitlines()[at - 1])} here)" in message
    assert f"conf/recordings/{recording.name}" in message
    assert "make outputs" in message and f"git rm conf/recordings/{recording.name}" in message
    assert seconds < 30  # seconds, not a build: on a loaded 2-core machine about 2


def test_a_recording_the_build_cannot_verify_is_reported_at_its_file(project):
    (project / "conf" / "recording-keys.txt").write_text("# no key\n")
    code, problems, _ = check(project)
    assert code == 1
    assert sorted(re.match(r"(\S+):1: ", p)[1] for p in problems) == [
        f"conf/recordings/{path.name}" for path in sorted({path for path, _ in RECORDED})
    ]
    assert all("no trusted key" in p for p in problems)


def test_the_first_difference_is_the_first_line_of_code_that_differs(tmp_path):
    before = '"""\nTitle\n=====\n"""\n\nx = 1\ny = 2\n\n# %%\n# Prose.\n\nz = 3\n'
    source = tmp_path / "example.py"
    source.write_text(before.replace("# Prose.", "# Other prose."))
    assert first_difference(source, before) is None
    source.write_text(before.replace("y = 2", "y = 3"))
    assert first_difference(source, before) == (7, "y = 2")
    source.write_text(before + "\n# %%\n# More.\n\nw = 4\n")
    assert first_difference(source, before)[0] == 17  # a new cell: its first line
    source.write_text(before.replace("\nz = 3\n", "\nz = 3\nv = 5\n"))
    assert first_difference(source, before) == (13, None)
