"""
.. _dataparallel-tutorial:

Train on several GPUs with ``nn.DataParallel``
==============================================

A PyTorch model runs on the CPU until you move it to a GPU, and then on
that one GPU. ``nn.DataParallel`` is the shortest way to use more than one:
it splits every batch across the GPUs, runs a copy of the model on each part,
and joins the results. This page builds the classic example step by step and
then shows what it prints on 1, 2, 3 and 8 GPUs.

Every output on this page was produced by running the code: while the site
was built, or earlier, on a machine that recorded what it printed. A
recorded output has a line above it that says so, with that machine's GPUs,
its PyTorch version and the date of the recording; an output without such a
line was printed while the site was built. Where the machine had fewer GPUs
than a result needs, the result comes from a CPU emulation of
``nn.DataParallel``, and its output says so; :ref:`dataparallel-emulation`
shows its code, what it reproduces and what it cannot. The pages are
written for PyTorch 2.13; the first output shows the version that ran the
code.
"""

# %%
# Imports and parameters
# ----------------------
#
# The model and the data are deliberately tiny, so that what you watch is how
# the batches move, not the arithmetic.

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

print("PyTorch", torch.__version__)

input_size = 5
output_size = 2

batch_size = 30
data_size = 100

# %%
# Choosing a device
# -----------------
#
# A ``torch.device`` names where tensors and parameters live. We use the first
# GPU when there is one and the CPU otherwise, so the same script runs
# everywhere.

device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
print("Device:", device)

# %%
# Moving things to that device looks the same for a module and a tensor, but
# behaves differently. ``module.to(device)`` moves the module's parameters
# *in place* and returns the same module, so the result may be ignored.
# ``tensor.to(device)`` returns a tensor on the device and leaves the original
# where it was, so the result must be assigned. When the tensor is already on
# that device with that dtype, it returns the tensor itself and copies
# nothing: that is what happens on a machine without a GPU.

layer = nn.Linear(input_size, output_size)
print("a new module's parameters are on", layer.weight.device)
print("module.to() returns the same module:", layer.to(device) is layer)

cpu_tensor = torch.ones(2, input_size)
moved = cpu_tensor.to(device)  # keep the returned tensor; cpu_tensor stays put
print("original on", cpu_tensor.device, "| result on", moved.device)
print("tensor.to() returned the same tensor:", moved is cpu_tensor)

# %%
# A dataset of random vectors
# ---------------------------
#
# The dataset holds ``data_size`` random vectors of length ``input_size``. The
# ``DataLoader`` shuffles them and hands them out in batches of
# ``batch_size``, so one pass yields batches of 30, 30, 30 and 10.


class RandomDataset(Dataset):
    """``length`` random vectors of ``size`` numbers each."""

    def __init__(self, size, length):
        self.len = length
        self.data = torch.randn(length, size)

    def __getitem__(self, index):
        return self.data[index]

    def __len__(self):
        return self.len


_ = torch.manual_seed(0)  # the same data on every build
rand_loader = DataLoader(
    dataset=RandomDataset(input_size, data_size), batch_size=batch_size, shuffle=True
)

# %%
# A model that reports what it sees
# ---------------------------------
#
# One linear layer is enough. Its ``forward`` prints the size of the input it
# receives and of the output it returns, which is how we will see what each
# GPU gets to work on.


class Model(nn.Module):
    """One linear layer that prints the sizes it sees."""

    def __init__(self, input_size, output_size):
        super().__init__()
        self.fc = nn.Linear(input_size, output_size)

    def forward(self, input):
        output = self.fc(input)
        print("\tIn Model: input size", input.size(), "output size", output.size())
        return output


# %%
# Wrapping the model in ``nn.DataParallel``
# -----------------------------------------
#
# This is the only change the model needs. When more than one GPU is visible
# we wrap it in ``nn.DataParallel``; then we move it to the device as usual.
# With one GPU or none there is nothing to split, so we skip it; the wrapper
# would still change how the model is saved (see
# :ref:`dataparallel-wrapper`).

model = Model(input_size, output_size)
if torch.cuda.device_count() > 1:
    print("Let's use", torch.cuda.device_count(), "GPUs!")
    model = nn.DataParallel(model)

model.to(device)

# %%
# Running the model
# -----------------
#
# The loop prints the sizes seen *outside* the model. Inside, each GPU prints
# its own share of the batch. The output below is what the machine that ran
# the code printed (see the top of the page for which machine that was).

for data in rand_loader:
    input = data.to(device)
    output = model(input)
    print("Outside: input size", input.size(), "output_size", output.size())

# %%
# .. _dataparallel-emulation:
#
# .. rst-class:: collapsed
#
# How this page shows several GPUs (code and limits)
# ----------------------------------------------------
#
# To show the results for 1, 2, 3 and 8 GPUs on every build, the page needs
# that many GPUs. When the machine that runs the code has them, the results
# come from the real ``nn.DataParallel``. When it does not, they come from the
# class below.
# It keeps ``nn.DataParallel``'s own ``forward``, which scatters the inputs
# and, with one device, calls the module on them; with more, it also
# replicates the module, applies the replicas and gathers their outputs. The
# class replaces those four steps with CPU versions that follow PyTorch's own
# code for them:
#
# * **scatter** splits every tensor with ``torch.chunk`` along ``dim`` (the
#   rule of the real scatter) and applies its rules for tuples, lists,
#   dictionaries and keyword arguments. Only as many replicas run as there
#   are chunks.
# * **replicate** builds each replica the way ``torch.nn.parallel.replicate``
#   does: a shallow copy of every submodule, whose parameters are plain
#   tensors. With grad enabled, ``self.parameters()`` is therefore empty
#   inside a replica's ``forward``; under ``torch.no_grad()`` replica 0 holds
#   the original parameters. An attribute that ``forward`` assigns on
#   ``self`` is lost with the replica, but an object that the replicas share
#   with the module, such as a list, keeps what any replica does to it.
#   Replica 0 shares the original's storage, buffers included, so BatchNorm's
#   running statistics are updated from replica 0's chunk; the other replicas
#   get copies. The parameter copies are differentiable, so the replicas'
#   gradients are summed into the original's.
# * **parallel_apply** calls the replicas one after another and, if one
#   fails, raises its error with the replica's number, as the real one does.
# * **gather** concatenates the outputs along ``dim``, turns scalar outputs
#   into a vector with one value per replica (with a warning), and gathers
#   ``None`` into ``None``.
#
# What it cannot reproduce:
#
# * Everything stays on the CPU and nothing is copied between devices: the
#   chunks are views of the input, and the output stays on the CPU whatever
#   ``output_device`` says.
# * The replicas run in turn, in replica order, in one thread. Real replicas
#   run at the same time, one thread per GPU: their prints can interleave,
#   and Python objects they share can be changed by two of them at once.
# * There are no CUDA streams, no autocast per device and no current device.
# * Autograd adds the replicas' gradients one by one on the CPU, where the
#   real one adds them up on ``device_ids[0]``: the same sum, but the last
#   bits can differ.
# * Times and memory use say nothing about real GPUs.

import warnings

from torch._utils import ExceptionWrapper  # what parallel_apply raises errors with


def _is_namedtuple(obj):
    """Whether ``obj`` is a named tuple, by the test PyTorch uses."""
    return isinstance(obj, tuple) and hasattr(obj, "_asdict") and hasattr(obj, "_fields")


def _replica_tensor(tensor, first, differentiable):
    """A replica's copy of ``tensor``; on ``device_ids[0]`` the original's storage."""
    if first:
        return tensor.view_as(tensor) if differentiable else tensor
    return tensor.clone() if differentiable else tensor.detach().clone()


class EmulatedDataParallel(nn.DataParallel):
    """``nn.DataParallel`` for ``n_devices`` pretend GPUs, on the CPU."""

    def __init__(self, module, n_devices, dim=0):
        super().__init__(module, dim=dim)
        self.module.cpu()  # with one real GPU, DataParallel moved it there
        self.dim = dim  # without CUDA, DataParallel.__init__ returned early
        self.device_ids = list(range(n_devices))
        self.output_device = self.device_ids[0]
        self.src_device_obj = torch.device("cpu")

    def scatter(self, inputs, kwargs, device_ids):
        """Split as ``scatter_kwargs`` does, with ``torch.chunk`` instead of copies."""
        count, dim = len(device_ids), self.dim

        def split(obj):
            if isinstance(obj, torch.Tensor):
                return torch.chunk(obj, count, dim)
            if _is_namedtuple(obj):
                return [type(obj)(*part) for part in zip(*map(split, obj))]
            if isinstance(obj, tuple) and obj:
                return list(zip(*map(split, obj)))
            if isinstance(obj, list) and obj:
                return [list(part) for part in zip(*map(split, obj))]
            if isinstance(obj, dict) and obj:
                return [type(obj)(part) for part in zip(*map(split, obj.items()))]
            return [obj for _ in device_ids]  # shared by every replica, not copied

        scattered = split(inputs) if inputs else []
        scattered_kwargs = split(kwargs) if kwargs else []
        if len(scattered) < len(scattered_kwargs):
            scattered += [() for _ in range(len(scattered_kwargs) - len(scattered))]
        elif len(scattered_kwargs) < len(inputs):
            scattered_kwargs += [{} for _ in range(len(scattered) - len(scattered_kwargs))]
        return tuple(scattered), tuple(scattered_kwargs)

    def replicate(self, module, device_ids):
        """Build replicas as ``torch.nn.parallel.replicate`` does, on the CPU."""
        detach = not torch.is_grad_enabled()
        modules = list(module.modules())
        replicas = []
        for index in range(len(device_ids)):
            first = index == 0
            tensors = {p: _replica_tensor(p, first, not detach) for p in module.parameters()}
            for b in module.buffers():
                tensors[b] = _replica_tensor(b, first, b.requires_grad and not detach)
            copies = {m: m._replicate_for_data_parallel() for m in modules}
            for m, replica in copies.items():
                for name, child in m._modules.items():
                    if child is not None:
                        setattr(replica, name, copies[child])
                for name, param in m._parameters.items():
                    if param is None:
                        replica._parameters[name] = None
                    else:  # a plain tensor: the replica has no parameters
                        setattr(replica, name, tensors[param])
                for name, buffer in m._buffers.items():
                    if buffer is not None:
                        setattr(replica, name, tensors[buffer])
            replicas.append(copies[module])
        return replicas

    def parallel_apply(self, replicas, inputs, kwargs):
        """Call the replicas in turn; re-raise the first failure as torch does."""
        outputs = []
        for index, (replica, args, kw) in enumerate(zip(replicas, inputs, kwargs, strict=True)):
            try:
                outputs.append(replica(*args, **kw))
            except Exception:
                where = f"in replica {index} on device {self.device_ids[index]}"
                outputs.append(ExceptionWrapper(where=where))
        for output in outputs:
            if isinstance(output, ExceptionWrapper):
                output.reraise()
        return outputs

    def gather(self, outputs, output_device):
        """Join the replicas' outputs as ``torch.nn.parallel.gather`` does, on the CPU."""
        dim = self.dim

        def join(parts):
            first = parts[0]
            if isinstance(first, torch.Tensor):
                if dim == 0 and all(part.dim() == 0 for part in parts):
                    warnings.warn(
                        "every replica returned a scalar: gathered into a vector"
                        " with one value per replica, as nn.DataParallel does",
                        stacklevel=4,
                    )
                    parts = [part.view(1) for part in parts]
                return torch.cat(parts, dim)
            if first is None:
                return None
            if isinstance(first, dict):
                if any(len(part) != len(first) for part in parts):
                    raise ValueError("replicas returned dicts with different numbers of keys")
                return type(first)((key, join([part[key] for part in parts])) for key in first)
            if _is_namedtuple(first):
                return type(first)._make(map(join, zip(*parts, strict=True)))
            return type(first)(map(join, zip(*parts, strict=True)))

        return join(outputs)


# %%
# The function below wraps a module for ``n_gpus`` GPUs: in the real
# ``nn.DataParallel`` when the machine has that many, otherwise in the
# emulation. It prints which one it chose and returns the device to put the
# inputs on.


def wrap(module, n_gpus):
    """Return ``module`` wrapped for ``n_gpus`` GPUs, real or emulated, and its device.

    It also prints which of the two it is, as the first line of the output.
    """
    if torch.cuda.device_count() >= n_gpus:
        print(f"# {n_gpus} × {torch.cuda.get_device_name(0)} (real nn.DataParallel)")
        where = torch.device("cuda:0")
        return nn.DataParallel(module.to(where), device_ids=list(range(n_gpus))), where
    print(f"# {n_gpus} GPU{'s' if n_gpus > 1 else ''} emulated on CPU")
    return EmulatedDataParallel(module, n_gpus), torch.device("cpu")


# %%
# With one device, ``forward`` still scatters: on a GPU, that copies the
# inputs to ``device_ids[0]``. Only the other three steps are skipped. The
# emulation runs ``nn.DataParallel``'s own ``forward``, so counting the steps
# it calls shows which of them PyTorch runs:


def counted(step, method, called):
    """``method``, noting ``step`` in ``called`` each time it runs."""

    def run(*args):
        called.append(step)
        return method(*args)

    return run


def steps_of_forward(n_devices):
    """The steps ``nn.DataParallel.forward`` calls for ``n_devices`` devices."""
    model = EmulatedDataParallel(nn.Linear(input_size, output_size), n_devices)
    called = []
    for step in ("scatter", "replicate", "parallel_apply", "gather"):
        setattr(model, step, counted(step, getattr(model, step), called))
    model(torch.randn(10, input_size))
    return called


for n_devices in (1, 3):
    print(f"{n_devices} device{'s' if n_devices > 1 else ''}:", ", ".join(steps_of_forward(n_devices)))

# %%
# PyTorch documents how replicas behave, and a small module shows it: a
# ``BatchNorm1d`` layer, a counter that ``forward`` assigns, a list that
# ``forward`` appends to, and a ``forward`` that returns a scalar and
# ``None``. Run on ten rows with 3 GPUs (emulated, unless the machine has
# them), the output below shows that
#
# * with grad enabled each replica has no parameters of its own, and under
#   ``torch.no_grad()`` replica 0 has the module's two;
# * the scalars come back as a vector with one value per replica
#   (``nn.DataParallel`` warns when it does this; the cell silences that);
# * the counter was assigned on the replicas, so the module still says 0,
#   while the list, shared by every replica, holds one entry from each;
# * BatchNorm counted one batch, and its running mean moved towards the mean
#   of the first chunk (4 rows) alone: only replica 0's update reaches the
#   module.


class Probe(nn.Module):
    """BatchNorm, a counter, a shared list, and a scalar and ``None`` as output."""

    def __init__(self):
        super().__init__()
        self.norm = nn.BatchNorm1d(input_size)
        self.calls = 0
        self.seen = []

    def forward(self, input):
        self.calls += 1  # assigns the replica's own attribute: lost with it
        self.seen.append((len(input), len(list(self.parameters()))))  # the shared list
        return self.norm(input).pow(2).mean(), None


probe = Probe()
probe_model, where = wrap(probe, 3)
rows = rand_loader.dataset.data[:10]
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # the scalars-into-a-vector notice, real or emulated
    scalars, nothing = probe_model(rows.to(where))
first_chunk = torch.chunk(rows, 3)[0]
print("(rows, parameters) in each replica:", sorted(probe.seen, reverse=True))
print("scalar outputs gathered into shape", tuple(scalars.shape), "| None gathered into", nothing)
print("calls counted on the module:", probe.calls, "| entries in its list:", len(probe.seen))
print("batches tracked by BatchNorm:", probe.norm.num_batches_tracked.item())
from_first = torch.allclose(probe.norm.running_mean.cpu(), probe.norm.momentum * first_chunk.mean(0))
print("running mean comes from the first chunk alone:", from_first)
probe.seen.clear()
probe.eval()  # evaluation: BatchNorm leaves its statistics alone
with warnings.catch_warnings(), torch.no_grad():
    warnings.simplefilter("ignore")
    probe_model(rows.to(where))
print("(rows, parameters) under torch.no_grad():", sorted(probe.seen, reverse=True))

# %%
# The function below runs one pass over the data on ``n_gpus`` GPUs, real or
# emulated, prints what produced the output, and also returns the batch sizes
# each replica received, so the comparison further down is measured too.


def run_on(n_gpus):
    """Run one pass over the data with ``n_gpus`` replicas; return their batch sizes."""
    _ = torch.manual_seed(0)
    inner = Model(input_size, output_size)
    seen = []
    inner.register_forward_pre_hook(lambda module, args: seen[-1].append(len(args[0])))
    model, where = wrap(inner, n_gpus)
    for data in rand_loader:
        seen.append([])
        input = data.to(where)
        output = model(input)
        print("Outside: input size", input.size(), "output_size", output.size())
    return [sorted(sizes, reverse=True) for sizes in seen]


observed = {}

# %%
# .. rst-class:: gpu-tabs
#
# Results
# -------
#
# Each tab shows one pass over the data. Every batch of ``B`` rows (30, and
# 10 for the last one) is cut into chunks of ``ceil(B / N)`` rows, the last
# chunk taking what is left, and each GPU prints the chunk it received before
# the loop prints the whole batch.
# On real GPUs the replicas run at the same time, so their lines can appear in
# any order; the emulation prints them in replica order.
#
# 1 GPU
# ^^^^^
#
# With one GPU there is nothing to split: the model sees each whole batch.

observed[1] = run_on(1)

# %%
# 2 GPUs
# ^^^^^^
#
# Each batch is halved: 15 and 15, then 5 and 5.

observed[2] = run_on(2)

# %%
# 3 GPUs
# ^^^^^^
#
# Thirty rows split evenly. The last batch of 10 does not: chunks of
# ``ceil(10 / 3) = 4`` rows give 4, 4 and 2.

observed[3] = run_on(3)

# %%
# 8 GPUs
# ^^^^^^
#
# Chunks of ``ceil(30 / 8) = 4`` rows give seven chunks of 4 and one of 2. For
# the last batch, chunks of ``ceil(10 / 8) = 2`` rows give only five chunks,
# so only five replicas run and three GPUs stay idle.

observed[8] = run_on(8)

# %%
# The four runs side by side
# --------------------------
#
# The table lists the rows each replica received, collected while the runs
# above executed.

batch_labels = [f"batch {i + 1}" for i in range(len(observed[1]))]
print(f"{'GPUs':>4} | " + " | ".join(f"{label:<15}" for label in batch_labels).rstrip())
for n_gpus, batches in observed.items():
    cells = [" ".join(str(size) for size in sizes) for sizes in batches]
    print(f"{n_gpus:>4} | " + " | ".join(f"{cell:<15}" for cell in cells).rstrip())

# %%
# The same numbers as a picture: each bar is one pass over the 100 samples,
# and each colour is one GPU.

try:
    import matplotlib.pyplot as plt
except ImportError:
    plt = None
    print("matplotlib is not installed, so the figure is skipped.")

if plt is not None:
    fig, ax = plt.subplots(figsize=(8, 3.2), layout="constrained")
    colours = plt.get_cmap("tab10").colors
    for row, (n_gpus, batches) in enumerate(observed.items()):
        start = 0
        for sizes in batches:
            for gpu, size in enumerate(sizes):
                ax.barh(row, size, left=start, color=colours[gpu], edgecolor="white")
                ax.text(start + size / 2, row, size, ha="center", va="center", fontsize=8)
                start += size
            ax.axvline(start, color="black", linewidth=1.5)
    ax.set_yticks(range(len(observed)), [f"{n} × GPU" for n in observed])
    ax.invert_yaxis()
    ax.set_xlim(0, data_size)
    ax.set_xlabel("samples (black lines separate batches of 30, 30, 30, 10)")
    plt.show()

# %%
# .. _dataparallel-wrapper:
#
# Saving a wrapped model
# ----------------------
#
# ``nn.DataParallel`` keeps your model as its attribute ``module``, with or
# without GPUs. Its ``state_dict`` therefore names every tensor with a
# ``module.`` prefix, and the model's own attributes are reached through
# ``.module``. Save ``model.module.state_dict()``: the file then loads into
# the bare model, and into a wrapped one through its ``.module`` (on another
# machine, read it with ``torch.load(path, map_location=device)``).

wrapped = nn.DataParallel(Model(input_size, output_size))
print("wrapped state_dict keys:", list(wrapped.state_dict()))
print("wrapped.module.fc:", wrapped.module.fc, "| wrapped.fc exists:", hasattr(wrapped, "fc"))
plain = Model(input_size, output_size)
print("loading wrapped.module.state_dict():", plain.load_state_dict(wrapped.module.state_dict()))
try:
    plain.load_state_dict(wrapped.state_dict())
except RuntimeError as refused:
    print("loading wrapped.state_dict():", str(refused).splitlines()[1].strip())

# %%
# What to remember
# ----------------
#
# * Wrap the model once with ``nn.DataParallel(model)`` and move it with
#   ``model.to(device)``; the training loop stays the same.
# * Assign the result of ``tensor.to(device)``; a module moves in place.
# * Each batch is split into chunks of ``ceil(B / N)`` rows, so a small last
#   batch can leave GPUs idle.
# * Every forward runs on fresh replicas: an attribute that ``forward``
#   assigns on ``self`` is lost (a shared list it appends to is not),
#   BatchNorm updates its running statistics from the first GPU's chunk only,
#   and a scalar output comes back as one value per replica.
# * The wrapper adds ``module.`` to every ``state_dict`` key: save
#   ``model.module.state_dict()``.
# * PyTorch now recommends ``DistributedDataParallel`` even on one machine.
#   :ref:`dataparallel-in-depth` explains the parameters, the gradients and
#   when to switch.

# sphinx_gallery_thumbnail_number = 1
