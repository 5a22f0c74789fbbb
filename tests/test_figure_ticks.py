"""A figure drawn again in Chinese keeps the English figure's ticks and their numbers; only its
words change (issue 65: a redrawn figure chose the ticks 0.0, 0.5, ... where the English has 0 ... 4)."""

import pickle
import re
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from catalogs.po import messages, read  # noqa: E402
from extensions.localized_examples import PICKLE, figure_family, load_figure, translated_figure  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
NUMBER = re.compile(r"[-−]?\d+(?:\.\d+)?")


def ticks(figure):
    """Each axis's tick locations and the numbers of its tick labels, as *figure* is drawn."""
    figure.draw_without_rendering()
    return [
        (list(axis.get_majorticklocs()), [NUMBER.findall(t.get_text()) for t in axis.get_ticklabels()])
        for ax in figure.axes
        for axis in (ax.xaxis, ax.yaxis)
    ]


def test_a_translation_that_takes_other_room_keeps_the_ticks(tmp_path):
    """A one-line title translated on four lines leaves a shorter plot, where Matplotlib alone
    would choose other ticks (at this size: steps of 1 for the English's steps of 0.5)."""
    figure, ax = plt.subplots(figsize=(4, 3.5), layout="constrained")
    ax.plot([0, 1, 2], [0, 4, 2])
    ax.set_title("Loss per batch")
    pickled = tmp_path / ("figure.png" + PICKLE)
    pickled.write_bytes(pickle.dumps(figure))  # as the build keeps it
    english = ticks(figure)
    plt.close(figure)
    translation = {"Loss per batch": "每個\n批次的\n平均\n損失"}
    chinese = translated_figure(pickled, lambda text: translation.get(text, text), figure_family("zh_TW"))
    assert chinese.axes[0].get_title() == translation["Loss per batch"]
    assert ticks(chinese) == english
    plt.close(chinese)


@pytest.mark.parametrize("lang", ["zh_CN", "zh_TW"])
def test_each_example_figure_keeps_its_ticks_in_chinese(site, lang):
    """Every figure the build kept, translated with its tutorial's catalog as the build does."""
    kept = sorted((ROOT / "docs" / "auto_examples" / "images").glob("*" + PICKLE))
    assert kept, "the build keeps each figure pickled beside its PNG"
    for pickled in kept:
        name = re.match(r"sphx_glr_(.+)_\d+\.png", pickled.name)[1]
        catalog = read(ROOT / "locale" / lang / "LC_MESSAGES" / "auto_examples" / f"{name}.po")
        translation = {m.id: m.string for m in messages(catalog) if m.string and not m.fuzzy}
        english = ticks(load_figure(pickled))
        chinese = translated_figure(pickled, lambda text: translation.get(text, text), figure_family(lang))
        assert ticks(chinese) == english, pickled.name
        plt.close("all")
