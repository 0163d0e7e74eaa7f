"""The one golden format of the test suite, read by tests/goldens.h.

One record per line (lines starting with '#' are comments):
    name dtype shape v1 v2 ... vn
dtype is f32, f64 or i64 (the tensor's own; bool and other integers as i64); shape is comma-separated dims ("6,6"), "scalar" for a
rank-0 tensor; values are float.hex() of each element (exact for all three dtypes; -inf, inf and
nan as Python spells them, and a NaN with its sign bit set as -nan, which float.hex() drops). A
text record (what torch or a program prints) is
    name txt text
with each backslash of the text doubled and each newline written as backslash-n: one line.
A text that must survive byte for byte (NUL, CR, U+2028, bytes that are not UTF-8) is
    name hex 48656c6c6f (the bytes in hex; read back as a text record)
A list of unsigned 64-bit integers (a generator's state: torch has no uint64 tensor, and a double
holds integers exactly only up to 2**53) is
    name u64 n 0x1f 0x... (n values in hex)
A make_<topic>_goldens.py script imports it by its own location:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from golden_format import golden_line
"""
import math

import torch

_DTYPES = {torch.float32: "f32", torch.float64: "f64", torch.int64: "i64"}


def _hex(v):
    # float.hex() drops a NaN's sign; 0/0 gives a negative NaN, which a test may need to see.
    if math.isnan(v) and math.copysign(1.0, v) < 0:
        return "-nan"
    return v.hex()


def golden_line(name, t):
    """The record of tensor `t` (anything torch.as_tensor takes) under `name`."""
    assert " " not in name, name
    # Python numbers and lists as float64 (as_tensor alone would round floats to float32).
    t = t.detach() if isinstance(t, torch.Tensor) else torch.as_tensor(t, dtype=torch.float64)
    if not t.is_floating_point():
        t = t.to(torch.int64)  # bool and the narrower integers: their values, exactly
    dtype = _DTYPES[t.dtype]
    shape = ",".join(str(d) for d in t.shape) if t.dim() > 0 else "scalar"
    values = [_hex(float(v)) for v in t.reshape(-1).tolist()]
    return " ".join([name, dtype, shape] + values)


def text_line(name, text):
    """The text record of string `text` under `name`."""
    assert " " not in name, name
    return name + " txt " + text.replace("\\", "\\\\").replace("\n", "\\n")


def u64_line(name, values):
    """The u64 record of the unsigned 64-bit integers `values` (a list) under `name`."""
    assert " " not in name, name
    values = [int(v) for v in values]
    assert all(0 <= v < 2**64 for v in values), name
    return " ".join([name, "u64", str(len(values))] + ["0x%x" % v for v in values])


def bytes_line(name, data):
    """The hex record of bytes `data` (a str is written as its UTF-8 bytes) under `name`."""
    assert " " not in name, name
    if isinstance(data, str):
        data = data.encode("utf-8")
    return name + " hex " + bytes(data).hex()
