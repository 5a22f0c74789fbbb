"""The CPU emulation of nn.DataParallel behaves as the real one, and the pages' claims hold.

The emulation is checked three ways: against PyTorch's own scatter, replicate
and gather code with only their CUDA copies swapped for CPU ones, against the
behaviour PyTorch documents for DataParallel replicas, and, on a machine with
CUDA, against the real nn.DataParallel. What the pages say of DataParallel is
checked against torch and against what the pages printed while they were built.
Each tutorial runs once, in this module.
"""

import collections
import importlib
import math
import re
import warnings
from pathlib import Path

import pytest
import torch
import torch.nn as nn

from conftest import printed_lines, run_example

# The modules, not the functions torch.nn.parallel exports under the same names.
replicate_module = importlib.import_module("torch.nn.parallel.replicate")
scatter_gather = importlib.import_module("torch.nn.parallel.scatter_gather")

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
EXAMPLE = EXAMPLES / "plot_01_dataparallel.py"
IN_DEPTH = EXAMPLES / "plot_02_dataparallel_in_depth.py"


@pytest.fixture(scope="module")
def tutorial_run():
    """The DataParallel tutorial's globals and output, from one run."""
    return run_example(EXAMPLE)


@pytest.fixture(scope="module")
def tutorial(tutorial_run):
    """The DataParallel tutorial's globals."""
    return tutorial_run[0]


@pytest.fixture(scope="module")
def in_depth():
    """The in-depth tutorial's globals and output, from one run."""
    return run_example(IN_DEPTH)


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


class Inspector(nn.Module):
    """Linear and BatchNorm; records, per call, what a replica looks like."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 4)
        self.norm = nn.BatchNorm1d(4)
        self.calls = 0
        self.reports = []  # a shared list: appending to it survives replication

    def forward(self, x):
        self.calls += 1
        self.reports.append(
            {
                "parameters": list(self.parameters()),
                "weight": self.fc.weight,
                "running_mean": self.norm.running_mean,
            }
        )
        return self.norm(self.fc(x))


# -- Splitting the batch ------------------------------------------------------


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


def assert_same_structure(actual, expected):
    """Equal nesting, container types and tensors; shared objects stay shared."""
    assert type(actual) is type(expected), (type(actual), type(expected))
    if isinstance(expected, torch.Tensor):
        assert torch.equal(actual, expected)
    elif isinstance(expected, dict):
        assert list(actual) == list(expected)
        for key in expected:
            assert_same_structure(actual[key], expected[key])
    elif isinstance(expected, (list, tuple)):
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert_same_structure(a, e)
    else:
        assert actual is expected


Pair = collections.namedtuple("Pair", "left right")


class CpuScatter:
    """Scatter's CUDA copy replaced by the split it makes: torch.chunk."""

    @staticmethod
    def apply(target_gpus, chunk_sizes, dim, tensor):
        return torch.chunk(tensor, len(target_gpus), dim)


class CpuGather:
    """Gather's CUDA copy replaced by the join it makes: torch.cat."""

    @staticmethod
    def apply(target_device, dim, *tensors):
        return torch.cat(tensors, dim)


SCATTER_CASES = {
    "one tensor": ((torch.randn(10, 3),), {}),
    "two tensors": ((torch.randn(10, 3), torch.randn(10)), {}),
    "shorter second tensor": ((torch.randn(10, 3), torch.randn(2, 3)), {}),
    "list and object": (([torch.randn(9, 2), "label"], 7), {}),
    "named tuple": ((Pair(torch.randn(10, 1), torch.randn(10, 2)),), {}),
    "dict": (({"a": torch.randn(10, 2), "b": 1.5},), {}),
    "kwargs": ((torch.randn(10, 3),), {"scale": torch.randn(10, 1), "flag": True}),
    "only kwargs": ((), {"x": torch.randn(10, 3)}),
    "fewer kwargs chunks": ((torch.randn(10, 3),), {"x": torch.randn(2, 3)}),
    "empty": ((), {}),
}


@pytest.mark.parametrize("case", SCATTER_CASES)
@pytest.mark.parametrize("n_devices", [2, 3, 8])
def test_scatter_follows_torch_scatter_kwargs(tutorial, monkeypatch, case, n_devices):
    inputs, kwargs = SCATTER_CASES[case]
    devices = list(range(n_devices))
    monkeypatch.setattr(scatter_gather, "Scatter", CpuScatter)
    expected = scatter_gather.scatter_kwargs(inputs, kwargs, devices, dim=0)
    emulated = tutorial["EmulatedDataParallel"](nn.Identity(), n_devices)
    assert_same_structure(emulated.scatter(inputs, kwargs, devices), expected)


GATHER_CASES = {
    "tensors": [torch.randn(4, 2), torch.randn(4, 2), torch.randn(2, 2)],
    "tuples with None": [(torch.randn(2, 1), None)] * 3,
    "lists": [[torch.randn(2, 3), torch.randn(2)]] * 2,
    "dicts": [{"out": torch.randn(3, 2), "aux": torch.randn(3)}] * 2,
    "named tuples": [Pair(torch.randn(2, 2), torch.randn(2, 1))] * 3,
    "nested": [{"pair": Pair(torch.randn(1, 2), None), "list": [torch.randn(1, 1)]}] * 4,
}


@pytest.mark.parametrize("case", GATHER_CASES)
def test_gather_follows_torch_gather(tutorial, monkeypatch, case):
    outputs = GATHER_CASES[case]
    monkeypatch.setattr(scatter_gather, "Gather", CpuGather)
    expected = scatter_gather.gather(outputs, 0, dim=0)
    emulated = tutorial["EmulatedDataParallel"](nn.Identity(), len(outputs))
    assert_same_structure(emulated.gather(outputs, 0), expected)


# -- Building the replicas ----------------------------------------------------


def cpu_broadcast(tensors, devices, detach=False):
    """_broadcast_coalesced_reshape on the CPU.

    Device 0 gets the inputs as they are (comm.broadcast_coalesced returns
    them as-is; the autograd Broadcast makes a view of an input it returns),
    every other device a copy, differentiable unless ``detach``.
    """
    copies = []
    for index in range(len(devices)):
        if index == 0:
            copies.append([t if detach else t.view_as(t) for t in tensors])
        else:
            copies.append([t.detach().clone() if detach else t.clone() for t in tensors])
    return copies


class Tied(nn.Module):
    """Shared submodule, a tied weight, an absent bias, a buffer and an empty slot."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(3, 3, bias=False)
        self.again = self.embed  # the same module twice
        self.head = nn.Linear(3, 3)
        self.head.weight = self.embed.weight  # a tied parameter
        self.norm = nn.BatchNorm1d(3)
        self.register_buffer("unused", None)
        self.register_module("missing", None)

    def forward(self, x):
        return self.norm(self.head(self.again(self.embed(x))))


def describe(replica, original):
    """What a replica is made of, in terms comparable between two builds."""
    tensors = {id(t): t for t in list(original.parameters()) + list(original.buffers())}
    modules = dict(replica.named_modules(remove_duplicate=False))
    report = {"modules": {name: type(m).__name__ for name, m in modules.items()}}
    report["tied"] = [(a, b) for a in modules for b in modules if a < b and modules[a] is modules[b]]
    for name, module in modules.items():
        report[name + "._parameters"] = sorted(module._parameters)
        for attr in ("weight", "bias", "running_mean", "running_var", "num_batches_tracked"):
            value = getattr(module, attr, None)
            if isinstance(value, torch.Tensor):
                source = original.get_submodule(name)
                origin = getattr(source, attr)
                report[f"{name}.{attr}"] = (
                    type(value).__name__,
                    value.requires_grad,
                    value is origin,
                    value.data_ptr() == origin.data_ptr(),
                    id(value) in tensors,
                    value.tolist(),
                )
    return report


@pytest.mark.parametrize("grad_enabled", [True, False])
def test_replicas_are_built_as_torch_replicate_builds_them(tutorial, monkeypatch, grad_enabled):
    torch.manual_seed(0)
    original = Tied()
    monkeypatch.setattr(replicate_module, "_broadcast_coalesced_reshape", cpu_broadcast)
    emulated = tutorial["EmulatedDataParallel"](original, 3)
    with torch.set_grad_enabled(grad_enabled):
        expected = replicate_module.replicate(original, [0, 1, 2], detach=not grad_enabled)
        replicas = emulated.replicate(original, [0, 1, 2])
    assert len(replicas) == len(expected) == 3
    for replica, reference in zip(replicas, expected):
        assert describe(replica, original) == describe(reference, original)


# -- What PyTorch documents about replicas --------------------------------------


def test_batchnorm_statistics_come_from_replica_0_only(tutorial):
    """DataParallel docs: in-place updates of buffers on device[0] are kept."""
    for n_devices in (2, 3, 8):
        torch.manual_seed(n_devices)
        module, x = Inspector(), torch.randn(10, 3)
        tutorial["EmulatedDataParallel"](module, n_devices)(x)
        first = module.fc(torch.chunk(x, n_devices)[0]).detach()
        m = module.norm.momentum
        torch.testing.assert_close(module.norm.running_mean, m * first.mean(0))
        torch.testing.assert_close(module.norm.running_var, (1 - m) + m * first.var(0))
        assert module.norm.num_batches_tracked.item() == 1


def test_batchnorm_statistics_with_one_device_see_the_whole_batch(tutorial):
    """With one device DataParallel calls the module itself."""
    torch.manual_seed(1)
    module, x = Inspector(), torch.randn(10, 3)
    tutorial["EmulatedDataParallel"](module, 1)(x)
    whole = module.fc(x).detach()
    torch.testing.assert_close(module.norm.running_mean, module.norm.momentum * whole.mean(0))


def test_state_set_in_forward_is_lost(tutorial):
    """DataParallel docs: a counter incremented in forward stays at its initial value."""
    for n_devices in (2, 3, 8):
        module = Inspector()
        model = tutorial["EmulatedDataParallel"](module, n_devices)
        model(torch.randn(10, 3))
        model(torch.randn(10, 3))
        assert module.calls == 0
        chunks = len(torch.chunk(torch.empty(10), n_devices))
        assert len(module.reports) == 2 * chunks  # a shared object does change
    single = Inspector()
    tutorial["EmulatedDataParallel"](single, 1)(torch.randn(10, 3))
    assert single.calls == 1


def test_replicas_have_no_parameters_of_their_own(tutorial):
    module = Inspector()
    tutorial["EmulatedDataParallel"](module, 3)(torch.randn(10, 3))
    assert [report["parameters"] for report in module.reports] == [[], [], []]
    weights = [report["weight"] for report in module.reports]
    assert not any(isinstance(w, nn.Parameter) for w in weights)
    assert all(w.requires_grad and w.grad_fn is not None for w in weights)


def test_without_grad_replica_0_holds_the_original_parameters(tutorial):
    """comm.broadcast_coalesced returns device 0's tensors as they are."""
    module = Inspector()
    with torch.no_grad():
        tutorial["EmulatedDataParallel"](module, 3)(torch.randn(10, 3))
    first, *others = [report["parameters"] for report in module.reports]
    assert len(first) == 4 and all(a is b for a, b in zip(first, module.parameters()))
    assert others == [[], []]
    assert not any(report["weight"].requires_grad for report in module.reports[1:])


def test_replica_0_shares_storage_with_the_module(tutorial):
    """DataParallel docs: device[0]'s replica shares parameters and buffers."""
    module = Inspector()
    tutorial["EmulatedDataParallel"](module, 3)(torch.randn(10, 3))
    first, *others = module.reports
    assert first["weight"].data_ptr() == module.fc.weight.data_ptr()
    assert first["running_mean"] is module.norm.running_mean
    for report in others:
        assert report["weight"].data_ptr() != module.fc.weight.data_ptr()
        assert report["running_mean"] is not module.norm.running_mean


class ScalarLoss(nn.Module):
    """Computes its loss inside forward, as some training code does."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x, target):
        return nn.functional.mse_loss(self.fc(x), target), None


def test_scalar_outputs_become_a_vector_with_a_warning(tutorial):
    """DataParallel docs: a scalar output becomes a vector, one value per device."""
    torch.manual_seed(3)
    module, x, target = ScalarLoss(), torch.randn(10, 3), torch.randn(10, 2)
    with pytest.warns(UserWarning, match="scalar"):
        losses, nothing = tutorial["EmulatedDataParallel"](module, 3)(x, target)
    assert nothing is None
    chunks = list(zip(torch.chunk(x, 3), torch.chunk(target, 3)))
    expected = torch.stack([module(cx, ct)[0] for cx, ct in chunks])
    torch.testing.assert_close(losses, expected)
    losses.sum().backward()
    emulated = [p.grad.clone() for p in module.parameters()]
    module.zero_grad()
    expected.sum().backward()
    for got, want in zip(emulated, module.parameters()):
        torch.testing.assert_close(got, want.grad)


def test_a_scalar_with_one_device_stays_a_scalar(tutorial):
    module, x, target = ScalarLoss(), torch.randn(10, 3), torch.randn(10, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loss, _ = tutorial["EmulatedDataParallel"](module, 1)(x, target)
    assert loss.dim() == 0


def test_a_failing_replica_is_named_in_the_error(tutorial):
    """parallel_apply re-raises a replica's error with its number and device."""
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    emulated = tutorial["EmulatedDataParallel"](model, 8)
    assert [len(c) for c in torch.chunk(torch.empty(25), 8)][-1] == 1
    with pytest.raises(ValueError, match=r"in replica 6 on device 6(.|\n)*more than 1 value"):
        emulated(torch.randn(25, 3))


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


# -- What the pages print -------------------------------------------------------


def test_tutorial_observed_the_documented_split(tutorial):
    observed = tutorial["observed"]
    assert observed[1] == [[30], [30], [30], [10]]
    assert observed[2] == [[15, 15]] * 3 + [[5, 5]]
    assert observed[3] == [[10, 10, 10]] * 3 + [[4, 4, 2]]
    assert observed[8] == [[4] * 7 + [2]] * 3 + [[2] * 5]


def test_tensor_to_returns_the_tensor_itself_when_nothing_moves(tutorial_run):
    namespace, printed = tutorial_run
    same = namespace["moved"] is namespace["cpu_tensor"]
    assert same == (namespace["device"].type == "cpu")
    assert f"tensor.to() returned the same tensor: {same}" in printed.splitlines()


def test_probe_output_shows_the_replica_behaviour(tutorial_run):
    namespace, printed = tutorial_run
    lines = printed.splitlines()
    probe = namespace["probe"]
    assert "(rows, parameters) in each replica: [(4, 0), (4, 0), (2, 0)]" in lines
    assert "scalar outputs gathered into shape (3,) | None gathered into None" in lines
    assert probe.calls == 0 and "calls counted on the module: 0 | entries in its list: 3" in lines
    assert probe.norm.num_batches_tracked.item() == 1
    assert "batches tracked by BatchNorm: 1" in lines
    assert "running mean comes from the first chunk alone: True" in lines


# -- plot_01: the wrapper and the replicas, as the page printed them --------------


def test_a_new_module_is_on_the_cpu_until_moved(site):
    """The page's first sentence: a model runs on the CPU until it is moved."""
    assert torch.nn.Linear(2, 2).weight.device == torch.device("cpu")
    printed = printed_lines(site, "plot_01_dataparallel")
    assert "a new module's parameters are on cpu" in printed


def test_the_wrapper_prefixes_state_dict_keys_with_module(site, tutorial):
    inner = tutorial["Model"](5, 2)
    wrapped = nn.DataParallel(inner)
    assert list(wrapped.state_dict()) == ["module." + key for key in inner.state_dict()]
    assert wrapped.module is inner and not hasattr(wrapped, "fc")
    with pytest.raises(RuntimeError, match="Missing key"):
        tutorial["Model"](5, 2).load_state_dict(wrapped.state_dict())
    printed = printed_lines(site, "plot_01_dataparallel")
    assert "wrapped state_dict keys: ['module.fc.weight', 'module.fc.bias']" in printed
    assert "loading wrapped.module.state_dict(): <All keys matched successfully>" in printed
    assert any(line.startswith("loading wrapped.state_dict(): Missing key(s)") for line in printed)


def test_with_one_device_forward_still_scatters(site, tutorial):
    """The emulation runs DataParallel's own forward, so its calls are torch's."""
    emulation = tutorial["EmulatedDataParallel"]
    assert "forward" not in vars(emulation) and emulation.forward is nn.DataParallel.forward
    assert tutorial["steps_of_forward"](1) == ["scatter"]
    assert tutorial["steps_of_forward"](3) == ["scatter", "replicate", "parallel_apply", "gather"]
    printed = printed_lines(site, "plot_01_dataparallel")
    assert "1 device: scatter" in printed
    assert "3 devices: scatter, replicate, parallel_apply, gather" in printed


def test_torch_replicas_lose_assignments_and_share_mutated_objects(monkeypatch, site, tutorial):
    monkeypatch.setattr(replicate_module, "_broadcast_coalesced_reshape", cpu_broadcast)
    probe = tutorial["Probe"]()
    replicas = replicate_module.replicate(probe, [0, 1, 2])
    for replica in replicas:
        replica(torch.randn(4, 5))
    assert probe.calls == 0 and all(replica.calls == 1 for replica in replicas)
    assert all(replica.seen is probe.seen for replica in replicas) and len(probe.seen) == 3
    printed = printed_lines(site, "plot_01_dataparallel")
    assert "calls counted on the module: 0 | entries in its list: 3" in printed


def test_torch_replicas_have_parameters_only_under_no_grad(monkeypatch, site, tutorial):
    monkeypatch.setattr(replicate_module, "_broadcast_coalesced_reshape", cpu_broadcast)
    probe = tutorial["Probe"]()
    with_grad = replicate_module.replicate(probe, [0, 1, 2])
    assert [len(list(replica.parameters())) for replica in with_grad] == [0, 0, 0]
    detached = replicate_module.replicate(probe, [0, 1, 2], detach=True)
    assert [len(list(replica.parameters())) for replica in detached] == [2, 0, 0]
    assert all(a is b for a, b in zip(detached[0].parameters(), probe.parameters()))
    printed = printed_lines(site, "plot_01_dataparallel")
    assert "(rows, parameters) in each replica: [(4, 0), (4, 0), (2, 0)]" in printed
    assert "(rows, parameters) under torch.no_grad(): [(4, 2), (4, 0), (2, 0)]" in printed


def busy_by_formula(rows, gpus):
    return math.ceil(rows / math.ceil(rows / gpus))


def test_idle_gpu_rule_over_many_batches(tutorial, in_depth):
    busy_gpus = in_depth[0]["busy_gpus"]
    emulate = tutorial["EmulatedDataParallel"]
    for gpus in range(1, 9):
        seen = []
        model = emulate(Recorder(seen), gpus)
        for rows in range(1, 201):
            seen.clear()
            model(torch.randn(rows, 3))
            chunks = len(torch.chunk(torch.empty(rows), gpus))
            assert busy_gpus(rows, gpus) == chunks == busy_by_formula(rows, gpus) == len(seen)


def test_largest_batch_leaving_a_gpu_idle(in_depth):
    largest = in_depth[0]["largest_batch_leaving_a_gpu_idle"]
    for gpus in range(1, 9):
        idle = [b for b in range(1, 201) if len(torch.chunk(torch.empty(b), gpus)) < gpus]
        assert largest(gpus) == max(idle, default=0), gpus


def test_printed_idle_table_agrees_with_torch_chunk(in_depth):
    printed = in_depth[1]
    rows = re.findall(r"^batch of +(\d+): (\d+) GPUs busy, (\d+) idle$", printed, re.M)
    assert {int(r) for r, _, _ in rows} >= {17, 25, 49, 50}
    for size, busy, idle in rows:
        chunks = len(torch.chunk(torch.empty(int(size)), 8))
        assert (int(busy), int(idle)) == (chunks, 8 - chunks)
    limits = re.findall(r"^(\d) GPUs: largest batch that leaves a GPU idle: (\d+)$", printed, re.M)
    assert [int(n) for n, _ in limits] == list(range(2, 9))
    for gpus, limit in limits:
        gpus, limit = int(gpus), int(limit)
        assert len(torch.chunk(torch.empty(limit), gpus)) < gpus
        assert all(len(torch.chunk(torch.empty(b), gpus)) == gpus for b in range(limit + 1, 201))


def test_in_depth_batchnorm_check_is_what_dataparallel_computes(tutorial, in_depth):
    """The page's by-hand replicas give the emulated DataParallel's gradients."""
    namespace, printed = in_depth
    torch.manual_seed(5)
    model = nn.Sequential(nn.Linear(5, 8), nn.BatchNorm1d(8), nn.Linear(8, 2))
    by_hand = namespace["replica_gradients"](model, 3)
    model.zero_grad()
    emulated = tutorial["EmulatedDataParallel"](model, 3)
    namespace["loss_fn"](emulated(namespace["inputs"]), namespace["targets"]).backward()
    for name, p in model.named_parameters():
        torch.testing.assert_close(p.grad, by_hand[name], msg=name)
    gap = re.search(r"single-device gradients: (\d+\.\d+)$", printed, re.M)
    assert gap and float(gap.group(1)) > 0.01  # BatchNorm per chunk changes the gradient
    assert "BatchNorm on the last chunk: Expected more than 1 value per channel" in printed


def test_in_depth_losses_are_what_dataparallel_returns(tutorial, in_depth):
    """A loss computed in forward comes back once per replica, as the page shows."""
    namespace, printed = in_depth

    class LossInForward(nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, x, y):
            return namespace["loss_fn"](self.model(x), y)

    wrapped = tutorial["EmulatedDataParallel"](LossInForward(namespace["model"]), 3)
    with pytest.warns(UserWarning):
        losses = wrapped(namespace["inputs"], namespace["targets"])
    torch.testing.assert_close(losses.detach(), namespace["per_replica"])
    whole = namespace["loss_fn"](namespace["model"](namespace["inputs"]), namespace["targets"])
    assert abs(losses.mean().item() - whole.item()) > 1e-3  # the plain mean is wrong
    rows = torch.tensor([4, 4, 2])
    torch.testing.assert_close((losses * rows).sum() / rows.sum(), whole)
    assert f"whole-batch loss:    {whole.item():.4f}" in printed.splitlines()


# -- Against the real nn.DataParallel (needs CUDA) ------------------------------


def real_device_ids(n_devices):
    """Real GPUs when there are enough, else GPU 0 repeated.

    With GPU 0 repeated, outputs, gradients and the replicas' parameters are
    what N distinct GPUs give, but not every buffer: see ``aliased_buffers``.
    """
    if torch.cuda.device_count() >= n_devices:
        return list(range(n_devices))
    return [0] * n_devices


def aliased_buffers(module, device_ids):
    """The buffers of *module* that a real replica after the first shares storage with.

    On N distinct GPUs there are none: each replica after the first gets
    fresh copies. With ``device_ids=[0] * N``, ``broadcast_coalesced``
    returns same-device tensors as they are, and a buffer alone in its dtype
    group (BatchNorm's int64 ``num_batches_tracked``) is flattened into a view
    of itself: every replica then updates the module's own counter, which no
    machine with N GPUs does. Such a buffer is not compared.
    """
    replicas = nn.parallel.replicate(module, device_ids)
    shared = set()
    for name, buffer in module.named_buffers():
        storage = buffer.untyped_storage().data_ptr()
        if any(dict(r.named_buffers())[name].untyped_storage().data_ptr() == storage for r in replicas[1:]):
            shared.add(name)
    return shared


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("n_devices", [2, 3, 8])
def test_emulation_matches_real_dataparallel(tutorial, n_devices):
    """Real nn.DataParallel replicates onto device_ids=[0]*N on a single GPU."""
    torch.manual_seed(2)
    real_seen, emu_seen = [], []
    real_inner, emu_inner = Recorder(real_seen), Recorder(emu_seen)
    emu_inner.load_state_dict(real_inner.state_dict())
    x, target = torch.randn(10, 3), torch.randn(10, 2)

    real = nn.DataParallel(real_inner.cuda(), device_ids=real_device_ids(n_devices))
    real_out = real(x.cuda())
    nn.functional.mse_loss(real_out, target.cuda()).backward()
    emu = tutorial["EmulatedDataParallel"](emu_inner, n_devices)
    emu_out = emu(x)
    nn.functional.mse_loss(emu_out, target).backward()

    assert sorted(real_seen, reverse=True) == emu_seen
    torch.testing.assert_close(real_out.cpu(), emu_out, rtol=1e-4, atol=1e-5)
    for p, q in zip(real_inner.parameters(), emu_inner.parameters()):
        torch.testing.assert_close(p.grad.cpu(), q.grad, rtol=1e-4, atol=1e-5)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("n_devices", [2, 3, 8])
def test_replica_behaviour_matches_real_dataparallel(tutorial, n_devices):
    torch.manual_seed(4)
    real_module, emu_module = Inspector(), Inspector()
    emu_module.load_state_dict(real_module.state_dict())
    x = torch.randn(10, 3)
    device_ids = real_device_ids(n_devices)
    aliased = aliased_buffers(real_module.cuda(), device_ids)
    if len(set(device_ids)) == n_devices:
        assert aliased == set()  # distinct GPUs: every replica after the first has copies
    else:
        assert aliased == {"norm.num_batches_tracked"}
    real = nn.DataParallel(real_module, device_ids=device_ids)
    emu = tutorial["EmulatedDataParallel"](emu_module, n_devices)
    torch.testing.assert_close(real(x.cuda()).cpu(), emu(x), rtol=1e-4, atol=1e-5)

    assert real_module.calls == emu_module.calls == 0
    compared = 0
    for name, buffer in real_module.norm.named_buffers():
        if f"norm.{name}" in aliased:
            continue  # what one GPU standing in for N cannot show
        emulated = getattr(emu_module.norm, name)
        torch.testing.assert_close(buffer.cpu(), emulated, rtol=1e-4, atol=1e-5, msg=name)
        compared += 1
    assert compared >= 2  # running_mean and running_var at least
    real_reports, emu_reports = real_module.reports, emu_module.reports
    assert [len(r["parameters"]) for r in real_reports] == [len(r["parameters"]) for r in emu_reports]
    assert real_reports[0]["weight"].data_ptr() == real_module.fc.weight.data_ptr()
    assert real_reports[0]["running_mean"] is real_module.norm.running_mean

    real_module.reports.clear()
    with torch.no_grad():
        real(x.cuda())
    assert all(a is b for a, b in zip(real_module.reports[0]["parameters"], real_module.parameters()))
    assert [len(r["parameters"]) for r in real_module.reports] == [4] + [0] * (len(real_module.reports) - 1)

    real_loss, emu_loss = ScalarLoss().cuda(), ScalarLoss()
    emu_loss.load_state_dict(real_loss.state_dict())
    target = torch.randn(10, 2)
    real_wrapped = nn.DataParallel(real_loss, device_ids=real_device_ids(n_devices))
    with pytest.warns(UserWarning):
        real_out, real_none = real_wrapped(x.cuda(), target.cuda())
    with pytest.warns(UserWarning):
        emu_out, emu_none = tutorial["EmulatedDataParallel"](emu_loss, n_devices)(x, target)
    assert real_none is None and emu_none is None
    torch.testing.assert_close(real_out.cpu(), emu_out, rtol=1e-4, atol=1e-5)

    failing = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    if n_devices == 8:
        with pytest.raises(ValueError, match="in replica 6 on device"):
            nn.DataParallel(failing.cuda(), device_ids=real_device_ids(8))(torch.randn(25, 3).cuda())
