#!/usr/bin/python3
"""Writes random_goldens.txt: torch CPU random streams that graph/random.cpp must reproduce exactly.

Run with Debian's torch 1.13 (x86-64, AVX2 kernels): /usr/bin/python3 make_random_goldens.py
Records in the suite's one golden format (tests/goldens/golden_format.py, read by
tests/goldens.h), each a list of n values: f32 / f64 draws as float.hex (exact, -0 kept), dropout
masks as i64, fan-ins and generator states as u64 (hex: a state's normal cache holds a double's
bits, beyond a double's exact integers).
"""
import math
import os
import struct
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from golden_format import golden_line, u64_line  # noqa: E402  the one golden format

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "random_goldens.txt")
lines = []


def emit(name, dtype, values):
    values = list(values)
    if dtype == "u64":
        lines.append(u64_line(name, values))
    else:
        torch_dtype = {"f32": torch.float32, "f64": torch.float64, "u8": torch.int64}[dtype]
        lines.append(golden_line(name, torch.tensor(values, dtype=torch_dtype).reshape(len(values))))


def flat(t):
    return t.detach().reshape(-1).tolist()


def tag(t):
    return {torch.float32: "f32", torch.float64: "f64"}[t]


DTYPES = (torch.float32, torch.float64)
SEEDS = (123, 789, 0, 2**40 + 7)

# torch.rand after manual_seed, several sizes (>= 16 too, in case a kernel vectorizes; 700 float32
# draws and 1400 engine draws for float64 cross MT19937's 624-word twists).
for seed in SEEDS:
    for dt in DTYPES:
        for n in (1, 5, 16, 17, 40, 700):
            torch.manual_seed(seed)
            emit("rand.%s.s%d.n%d" % (tag(dt), seed, n), tag(dt), flat(torch.rand(n, dtype=dt)))

# torch.Generator()'s seed, the one a fresh tapegrad::Generator uses.
g = torch.Generator()
assert g.initial_seed() == 67280421310721
emit("rand.f32.default.n5", "f32", flat(torch.rand(5, generator=g)))

# Consecutive calls carry the state over (mixed dtypes).
torch.manual_seed(123)
emit("consec.0.f32", "f32", flat(torch.rand(7)))
emit("consec.1.f64", "f64", flat(torch.rand(9, dtype=torch.float64)))
emit("consec.2.f32", "f32", flat(torch.rand(20)))

# The book: torch.manual_seed(123); torch.rand(3, 2) three times.
torch.manual_seed(123)
for k in range(3):
    emit("book.rand3x2.%d" % k, "f32", flat(torch.rand(3, 2)))

# Tensor.uniform_(from, to).
UNIFORM_RANGES = ((-1 / math.sqrt(3), 1 / math.sqrt(3)), (-0.3, 0.7), (2.5, 7.1), (-1e-3, 5.0))
for k, (lo, hi) in enumerate(UNIFORM_RANGES):
    emit("uniform.%d.params" % k, "f64", [lo, hi])
    for dt in DTYPES:
        torch.manual_seed(123)
        emit("uniform.%d.%s" % (k, tag(dt)), tag(dt), flat(torch.empty(64, dtype=dt).uniform_(lo, hi)))

# nn.Linear's default init, then rand(4) to pin down how many draws it used.
LINEARS = ((3, 2, False), (3, 2, True), (6, 4, True), (64, 10, True))
for seed in (789, 123):
    for (fin, fout, bias) in LINEARS:
        for dt in DTYPES:
            torch.manual_seed(seed)
            layer = torch.nn.Linear(fin, fout, bias=bias, dtype=dt)
            name = "linear.%s.s%d.%dx%d%s" % (tag(dt), seed, fin, fout, "" if bias else ".nobias")
            emit(name + ".weight", tag(dt), flat(layer.weight))
            if bias:
                emit(name + ".bias", tag(dt), flat(layer.bias))
            emit(name + ".after", "f32", flat(torch.rand(4)))

# The bounds, exactly as torch.nn.init computes them (weight: kaiming_uniform_ with a = sqrt(5)).
FANS = list(range(1, 257)) + [300, 768, 1000, 1024, 3072, 4096, 50257, 123457]
a = math.sqrt(5)
weight_bounds = []
for fan in FANS:
    gain = torch.nn.init.calculate_gain("leaky_relu", a)
    assert gain == math.sqrt(2.0 / (1 + a**2))
    weight_bounds.append(math.sqrt(3.0) * (gain / math.sqrt(fan)))
    w = torch.empty(1, fan, dtype=torch.float64)
    torch.manual_seed(5)
    torch.nn.init.kaiming_uniform_(w, a=a)
    assert w.abs().max().item() <= weight_bounds[-1]
emit("bound.fan_in", "u64", FANS)
emit("bound.weight", "f64", weight_bounds)
emit("bound.bias", "f64", [1 / math.sqrt(fan) for fan in FANS])

# Dropout on CPU: the book's example, then other p; mask = output != 0 on a tensor of ones.
for p in (0.5, 0.1, 0.0, 1.0):
    for dt in DTYPES:
        torch.manual_seed(123)
        drop = torch.nn.Dropout(p)
        out = drop(torch.ones(6, 6, dtype=dt))
        name = "dropout.%s.p%s" % (tag(dt), p)
        emit(name + ".out", tag(dt), flat(out))
        emit(name + ".mask", "u8", [int(v != 0) for v in flat(out)])
        emit(name + ".after", "f32", flat(torch.rand(4)))

# Dropout's arithmetic on arbitrary inputs (negative values give -0 when dropped).
for dt in DTYPES:
    torch.manual_seed(42)
    x = torch.randn(64, dtype=dt) * 3
    torch.manual_seed(7)
    y = torch.nn.functional.dropout(x, 0.3, training=True)
    emit("dropout.%s.p0.3.x" % tag(dt), tag(dt), flat(x))
    emit("dropout.%s.p0.3.out" % tag(dt), tag(dt), flat(y))

# The scale given to kept values, for many p (torch: noise.div_(1 - p) in the tensor's dtype).
ps = [k / 100 for k in range(1, 100)] + [1 / 3, 0.123456789, 0.987654321, 1e-9, 0.999]
emit("dropout.scale.p", "f64", ps)
for dt in DTYPES:
    scales = []
    for p in ps:
        torch.manual_seed(1)
        out = torch.nn.functional.dropout(torch.ones(20000, dtype=dt), p, training=True)
        kept = out[out != 0]
        assert kept.numel() > 0 and (kept == kept[0]).all()
        scales.append(kept[0].item())
    emit("dropout.scale.%s" % tag(dt), tag(dt), scales)

# torch.randn / normal_: scalar path (n < 16, float64 Box-Muller with a cached second sample) and
# the blocked paths (n >= 16: AVX2 kernel for float32, libm for float64).
for seed in (123, 789, 0):
    for dt in DTYPES:
        for n in (1, 2, 3, 5, 15, 16, 17, 31, 32, 33, 100, 1000):
            torch.manual_seed(seed)
            emit("randn.%s.s%d.n%d" % (tag(dt), seed, n), tag(dt), flat(torch.randn(n, dtype=dt)))

# The cached normal sample survives the blocked path and a dtype change.
torch.manual_seed(123)
emit("randn.cache.0.f32", "f32", flat(torch.randn(3)))
emit("randn.cache.1.f32", "f32", flat(torch.randn(20)))
emit("randn.cache.2.f64", "f64", flat(torch.randn(1, dtype=torch.float64)))
emit("randn.cache.3.f64", "f64", flat(torch.randn(2, dtype=torch.float64)))

# normal_(mean, std): the final multiply-add is fused.
for dt in DTYPES:
    for n in (5, 40):
        torch.manual_seed(321)
        t = torch.empty(n, dtype=dt).normal_(2.5, 0.7)
        emit("normal.%s.m2.5.s0.7.n%d" % (tag(dt), n), tag(dt), flat(t))


# torch.get_rng_state(): CPUGeneratorImplState (legacy pod + float normal cache), 5056 bytes.
def torch_state_fields():
    raw = bytes(torch.get_rng_state().tolist())
    assert len(raw) == 5056, len(raw)
    seed, left, seeded, nxt = struct.unpack_from("<QiiQ", raw, 0)
    words = struct.unpack_from("<624Q", raw, 24)
    normal_x, normal_y, normal_rho, normal_valid = struct.unpack_from("<dddi", raw, 24 + 624 * 8)
    assert seeded == 1
    bits = struct.unpack("<Q", struct.pack("<d", normal_y))[0] if normal_valid else 0
    return [seed, left, nxt] + list(words) + [1 if normal_valid else 0, bits]


torch.manual_seed(123)
emit("state.s123.fresh", "u64", torch_state_fields())
torch.rand(5)
emit("state.s123.rand5", "u64", torch_state_fields())
saved = torch.get_rng_state()
first = torch.rand(10)
torch.set_rng_state(saved)
second = torch.rand(10)
assert torch.equal(first, second)
emit("state.s123.rand5.next10", "f32", flat(first))
torch.manual_seed(2**40 + 7)
torch.randn(3)
emit("state.s1099511627783.randn3", "u64", torch_state_fields())
saved = torch.get_rng_state()
first = torch.randn(1, dtype=torch.float64)
torch.set_rng_state(saved)
assert torch.equal(first, torch.randn(1, dtype=torch.float64))
emit("state.s1099511627783.randn3.next1", "f64", flat(first))

with open(OUT, "w") as f:
    f.write("# torch CPU random goldens for tests/graph/test_random.cpp; written by make_random_goldens.py\n")
    f.write("# torch %s; format: tests/goldens/golden_format.py\n" % torch.__version__)
    f.write("\n".join(lines) + "\n")
print("wrote %d records to %s" % (len(lines), OUT))
