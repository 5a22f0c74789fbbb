"""The CPU emulation of nn.DataParallel is faithful: sizes, outputs, gradients."""

import contextlib
import io
import runpy
from pathlib import Path

import pytest
import torch
import torch.nn as nn

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "plot_01_dataparallel.py"


@pytest.fixture(scope="module")
def tutorial():
    """Run the tutorial once (quietly) and return its globals."""
    with contextlib.redirect_stdout(io.StringIO()):
        return runpy.run_path(str(EXAMPLE), run_name="tutorial")


class Recorder(nn.Module):
    """A linear layer that records the batch size each call receives."""

    def __init__(self, seen):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.seen = seen

    def forward(self, x, scale=None):
        self.seen.append(len(x))
        out = self.fc(x)
        return out if scale is None else out * scale


def test_per_replica_sizes_equal_torch_chunk(tutorial):
    emulate = tutorial["EmulatedDataParallel"]
    for n_devices in range(1, 9):
        seen = []
        model = emulate(Recorder(seen), n_devices)
        for batch in range(1, 65):
            seen.clear()
            output = model(torch.randn(batch, 3))
            expected = [len(c) for c in torch.chunk(torch.empty(batch), n_devices)]
            assert seen == expected, (batch, n_devices)
            assert output.shape == (batch, 2)


def test_only_as_many_replicas_as_chunks(tutorial):
    seen = []
    tutorial["EmulatedDataParallel"](Recorder(seen), 8)(torch.randn(10, 3))
    assert seen == [2, 2, 2, 2, 2]


def test_kwargs_are_scattered_too(tutorial):
    seen = []
    model = tutorial["EmulatedDataParallel"](Recorder(seen), 3)
    x, scale = torch.randn(10, 3), torch.randn(10, 1)
    torch.testing.assert_close(model(x, scale=scale), model.module(x, scale=scale))
    assert seen[:3] == [4, 4, 2]


def test_split_along_another_dim(tutorial):
    shapes = []

    class Probe(nn.Module):
        def forward(self, x):
            shapes.append(tuple(x.shape))
            return x * 2

    model = tutorial["EmulatedDataParallel"](Probe(), 3, dim=1)
    x = torch.randn(7, 10, 4)
    torch.testing.assert_close(model(x), x * 2)
    assert shapes == [(7, 4, 4), (7, 4, 4), (7, 2, 4)]


@pytest.mark.parametrize("n_devices", [1, 2, 3, 8])
def test_forward_and_gradients_match_the_unwrapped_model(tutorial, n_devices):
    torch.manual_seed(1)
    inner = Recorder([])
    reference = Recorder([])
    reference.load_state_dict(inner.state_dict())
    x, target = torch.randn(10, 3), torch.randn(10, 2)

    wrapped = tutorial["EmulatedDataParallel"](inner, n_devices)
    out = wrapped(x)
    torch.testing.assert_close(out, reference(x))
    nn.functional.mse_loss(out, target).backward()
    nn.functional.mse_loss(reference(x), target).backward()
    for (name, p), q in zip(inner.named_parameters(), reference.parameters()):
        assert p.grad is not None, name
        torch.testing.assert_close(p.grad, q.grad, msg=name)


def test_real_dataparallel_is_a_pass_through_without_cuda():
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    seen = []
    wrapped = nn.DataParallel(Recorder(seen), device_ids=[0, 1, 2])
    wrapped(torch.randn(10, 3))
    assert wrapped.device_ids == [] and seen == [10]


def test_tutorial_observed_the_documented_split(tutorial):
    observed = tutorial["observed"]
    assert observed[1] == [[30], [30], [30], [10]]
    assert observed[2] == [[15, 15]] * 3 + [[5, 5]]
    assert observed[3] == [[10, 10, 10]] * 3 + [[4, 4, 2]]
    assert observed[8] == [[4] * 7 + [2]] * 3 + [[2] * 5]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("n_devices", [2, 3, 8])
def test_emulation_matches_real_dataparallel(tutorial, n_devices):
    """Real nn.DataParallel replicates onto device_ids=[0]*N on a single GPU."""
    if torch.cuda.device_count() >= n_devices:
        device_ids = list(range(n_devices))
    else:
        device_ids = [0] * n_devices
    torch.manual_seed(2)
    real_seen, emu_seen = [], []
    real_inner, emu_inner = Recorder(real_seen), Recorder(emu_seen)
    emu_inner.load_state_dict(real_inner.state_dict())
    x, target = torch.randn(10, 3), torch.randn(10, 2)

    real = nn.DataParallel(real_inner.cuda(), device_ids=device_ids)
    real_out = real(x.cuda())
    nn.functional.mse_loss(real_out, target.cuda()).backward()
    emu = tutorial["EmulatedDataParallel"](emu_inner, n_devices)
    emu_out = emu(x)
    nn.functional.mse_loss(emu_out, target).backward()

    assert sorted(real_seen, reverse=True) == emu_seen
    torch.testing.assert_close(real_out.cpu(), emu_out, rtol=1e-4, atol=1e-5)
    for p, q in zip(real_inner.parameters(), emu_inner.parameters()):
        torch.testing.assert_close(p.grad.cpu(), q.grad, rtol=1e-4, atol=1e-5)
