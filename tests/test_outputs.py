"""Recorded example output: make outputs, make html OUTPUTS=..., and their provenance (on copies).

Every example of the copies appends its name to $DP_TEST_COUNTER when it runs,
so a test can tell exactly which examples a build executed.
"""

import functools
import hashlib
import http.server
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import threading

import pytest
from bs4 import BeautifulSoup

from build.project_copy import copy_project

EPOCH = "1700000000"
LANGS = "LANGUAGES=en zh_TW"
COUNTER_CELL = """

# %%
# (added by tests/test_outputs.py: count this example's executions)

import os as _os

if "DP_TEST_COUNTER" in _os.environ:
    with open(_os.environ["DP_TEST_COUNTER"], "a") as _counter:
        _counter.write("{name}\\n")
"""


def counted_copy(folder):
    """A project copy with nothing executed whose examples count their executions."""
    project = copy_project(folder, with_gallery=False)
    for example in (project / "examples").glob("*.py"):
        example.write_text(example.read_text("utf-8") + COUNTER_CELL.format(name=example.name))
    return project


def run(project, *args, **env):
    """Run make in *project* as a person would; return the completed process."""
    base = {k: v for k, v in os.environ.items() if k not in ("DP_BUILD_LOCK", "DP_COMMAND")}
    env = {**base, "SOURCE_DATE_EPOCH": EPOCH, "DP_TEST_COUNTER": str(project / "runs.txt"), **env}
    return subprocess.run(["make", "--no-print-directory", *args], cwd=project, env=env,
                          capture_output=True, text=True)  # fmt: skip


def ok(result):
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout + result.stderr


def executed(project):
    """The examples run so far in *project*, and forget them."""
    runs = project / "runs.txt"
    names = sorted(runs.read_text().split()) if runs.exists() else []
    runs.unlink(missing_ok=True)
    return names


def pages(html, keep_provenance=True):
    """{path: bytes} of a built site; HTML without the provenance notes if asked."""
    found = {}
    for path in sorted(html.rglob("*")):
        # searchindex.js indexes the notes' words; .buildinfo hashes the config,
        # which names the checkout's folder.
        if not path.is_file() or path.name in ("searchindex.js", ".buildinfo"):
            continue
        data = path.read_bytes()
        if path.suffix == ".html" and not keep_provenance:
            data = re.sub(rb'<p class="provenance">.*?</p>\n?', b"", data, flags=re.S)
        found[path.relative_to(html).as_posix()] = hashlib.sha256(data).hexdigest()
    return found


def notes(project, lang, page):
    soup = BeautifulSoup((project / "_build/html" / lang / page).read_text("utf-8"), "html.parser")
    return [p.get_text() for p in soup.select("p.provenance")]


@pytest.fixture(scope="module")
def recording(site, tmp_path_factory):
    """A copy that recorded every example (make outputs) and built by executing them."""
    tmp = tmp_path_factory.mktemp("outputs")
    project = counted_copy(tmp / "recorder")
    ok(run(project, "outputs", f"OUT={tmp / 'all.tar.gz'}"))
    assert executed(project) == sorted(p.name for p in (project / "examples").glob("*.py"))
    ok(run(project, "html", LANGS))  # the same examples, executed while building
    executed(project)
    return tmp, project, tmp / "all.tar.gz"


def read_manifest(path):
    with tarfile.open(path) as archive:
        return json.load(archive.extractfile("manifest.json"))


def test_a_recording_names_what_produced_each_result(recording):
    _, project, path = recording
    manifest = read_manifest(path)
    from sphinx_gallery.utils import get_md5sum

    import torch

    assert set(manifest["examples"]) == {p.name for p in (project / "examples").glob("*.py")}
    for name, example in manifest["examples"].items():
        assert example["md5"] == get_md5sum(project / "examples" / name, mode="t")
        facts = example["executed"]
        assert facts["recorded"] and facts["torch"] == torch.__version__
        assert facts["gpus"] == [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
        assert facts["date"] == "2023-11-14"  # SOURCE_DATE_EPOCH
    results = manifest["examples"]["plot_01_dataparallel.py"]["results"]
    emulated = [r["count"] for r in results if r["kind"] == "emulated"]
    assert emulated[-4:] == ["1", "2", "3", "8"] or torch.cuda.device_count() > 0
    ddp = manifest["examples"]["plot_03_distributed_data_parallel.py"]["results"]
    assert [(r["kind"], r["count"]) for r in ddp] == [("processes", n) for n in "1238"]


def test_a_build_from_a_recording_executes_nothing_and_shows_the_same_pages(recording):
    tmp, recorder, path = recording
    project = counted_copy(tmp / "reader")
    log = ok(run(project, "html", LANGS, f"OUTPUTS={path}"))
    assert executed(project) == []
    assert log.count("recorded output used") == 3
    for lang in ("en", "zh_TW"):
        assert pages(project / "_build/html" / lang, keep_provenance=False) == pages(
            recorder / "_build/html" / lang, keep_provenance=False), lang  # fmt: skip
    # Only the notes differ: recorded there, executed here.
    assert all("recorded 2023-11-14" in n for n in notes(project, "en", "auto_examples/plot_01_dataparallel.html"))
    assert all("run while this page was built" in n
               for n in notes(recorder, "en", "auto_examples/plot_01_dataparallel.html"))  # fmt: skip
    zh_tw = notes(project, "zh_TW", "auto_examples/plot_03_distributed_data_parallel.html")
    assert zh_tw and all("錄製" in n for n in zh_tw)


def test_two_shards_merged_equal_one_full_recording(recording):
    tmp, recorder, whole = recording
    shards = [tmp / f"shard{k}.tar.gz" for k in (1, 2)]
    for k, shard in enumerate(shards, 1):
        ok(run(recorder, "outputs", f"SHARD={k}/2", f"OUT={shard}"))
    assert sum(len(read_manifest(s)["examples"]) for s in shards) == 3
    executed(recorder)
    built = {}
    for name, sources in (("whole", str(whole)), ("shards", " ".join(map(str, shards)))):
        project = counted_copy(tmp / f"from-{name}")
        ok(run(project, "html", LANGS, f"OUTPUTS={sources}"))
        assert executed(project) == []
        built[name] = pages(project / "_build/html")
    assert built["shards"] == built["whole"]


def test_a_stale_recording_is_executed_again_and_said_so(recording):
    tmp, _, path = recording
    project = counted_copy(tmp / "stale")
    example = project / "examples" / "plot_02_dataparallel_in_depth.py"
    example.write_text(example.read_text("utf-8").replace(
        "\nimport torch\n", '\nimport torch\n\nprint("changed after it was recorded")\n', 1))  # fmt: skip
    log = ok(run(project, "html", LANGS, f"OUTPUTS={path}"))
    assert executed(project) == ["plot_02_dataparallel_in_depth.py"]
    assert "plot_02_dataparallel_in_depth.py: its source changed since it was recorded" in log
    assert "changed after it was recorded" in (
        project / "_build/html/en/auto_examples/plot_02_dataparallel_in_depth.html").read_text()
    others = notes(project, "en", "auto_examples/plot_03_distributed_data_parallel.html")
    assert others and all("recorded 2023-11-14" in n for n in others)


def rewrite(path, target, change):
    """Copy the recording *path* to *target*, with change(name, bytes) -> bytes applied."""
    with tarfile.open(path) as source, tarfile.open(target, "w:gz") as out:
        for member in source:
            data = change(member.name, source.extractfile(member).read())
            member.size = len(data)
            out.addfile(member, io.BytesIO(data))


def test_a_recording_from_real_gpus_says_so_in_each_language(recording):
    """A fixture made here, never published: 8 GPUs claimed for plot_01."""
    tmp, _, path = recording
    gpu = "NVIDIA A100-SXM4-80GB"

    def on_gpus(name, data):
        if name == "gallery/plot_01_dataparallel.rst":
            return data.replace(b"# 8 GPUs emulated on CPU", f"# 8 × {gpu} (real nn.DataParallel)".encode())
        if name.endswith("plot_01_dataparallel.provenance.json"):
            facts = json.loads(data)
            facts.update(gpus=[gpu] * 8, cuda="12.8", driver="570.86.15")
            return json.dumps(facts).encode()
        return data

    rewrite(path, tmp / "gpus.tar.gz", on_gpus)
    project = counted_copy(tmp / "gpus")
    ok(run(project, "html", LANGS, f"OUTPUTS={tmp / 'gpus.tar.gz'}"))
    page = "auto_examples/plot_01_dataparallel.html"
    english = notes(project, "en", page)
    assert f"8 × {gpu}, real nn.DataParallel; recorded 2023-11-14" in english[-1]
    assert "CUDA 12.8, driver 570.86.15" in english[-1]
    assert all("emulated on the CPU" in n for n in english[:-1])
    chinese = notes(project, "zh_TW", page)
    assert f"8 × {gpu}，真正的 nn.DataParallel" in chinese[-1] and "模擬" in chinese[-2]


def test_an_unusable_recording_fails_before_anything_is_built(recording, tmp_path):
    tmp, recorder, path = recording
    truncated = tmp_path / "truncated.tar.gz"
    truncated.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    before = pages(recorder / "_build/html")
    result = run(recorder, "html", LANGS, f"OUTPUTS={truncated}")
    assert result.returncode != 0
    assert f"{truncated}: not a readable recording" in result.stderr
    assert "--- building" not in result.stdout and pages(recorder / "_build/html") == before

    with socket_server() as closed_port:  # a port nothing listens on
        url = f"http://127.0.0.1:{closed_port}/outputs.tar.gz"
    result = run(recorder, "html", LANGS, f"OUTPUTS={url}")
    assert result.returncode != 0 and f"{url}: cannot download the recording" in result.stderr
    assert pages(recorder / "_build/html") == before


class socket_server:
    """Reserve a free port and release it: afterwards nothing listens there."""

    def __enter__(self):
        import socket

        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))
        return self.socket.getsockname()[1]

    def __exit__(self, *exc):
        self.socket.close()


@pytest.fixture
def http_folder(tmp_path):
    """Serve a folder on 127.0.0.1; yield (folder, base URL)."""
    folder = tmp_path / "served"
    folder.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield folder, f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()


def test_read_the_docs_uses_a_published_recording_or_executes(recording, http_folder, tmp_path):
    tmp, _, path = recording
    folder, base = http_folder
    (folder / "outputs-abc1234.tar.gz").write_bytes(path.read_bytes())
    for commit, expected in (("abc1234", []), ("def5678", None)):
        project = counted_copy(tmp_path / commit)
        env = {"READTHEDOCS": "True", "READTHEDOCS_LANGUAGE": "zh-tw", "READTHEDOCS_VERSION": "latest",
               "READTHEDOCS_OUTPUT": str(tmp_path / commit / "out"),
               "READTHEDOCS_GIT_COMMIT_HASH": commit,
               "DP_OUTPUTS_URL": base + "outputs-{commit}.tar.gz",
               "DP_TEST_COUNTER": str(project / "runs.txt"), "SOURCE_DATE_EPOCH": EPOCH}  # fmt: skip
        base_env = {k: v for k, v in os.environ.items() if k not in ("DP_BUILD_LOCK", "DP_COMMAND")}
        result = subprocess.run([sys.executable, "conf/build/build_site.py", "readthedocs"],
                                cwd=project, env={**base_env, **env}, capture_output=True, text=True)  # fmt: skip
        log = ok(result)
        ran = executed(project)
        if expected is not None:
            assert ran == expected and "recorded output used" in log
        else:
            assert len(ran) == 3 and "no published recording: the examples are executed here" in log
