#!/usr/bin/env python3
"""Reads a tapegrad checkpoint and writes one, with nothing but Python's json, struct and zlib.

Used by tests/io/test_checkpoint.cpp ("checkpoint: plain Python reads ours and writes one we load"):

  checkpoint_interop.py read FILE OUT.txt
      Parses FILE as safetensors, checks its framing, offsets and CRC, and writes every tensor to
      OUT.txt as `name dtype shape... : value.hex() ...` (uint64 words in decimal), then the
      metadata as `meta key value`. With numpy installed, every tensor is also decoded with
      numpy.frombuffer, and with torch installed the float tensors with torch.frombuffer and
      reshape (what safetensors.torch.load_file does; Debian has no python3-safetensors), and
      both must agree bit for bit. The last line names the decoders used: `decoders struct ...`.
  checkpoint_interop.py write FILE
      Writes a safetensors file the way Python tools do (json.dumps with spaces, padded, no
      CRC): "W" float32 [2, 3] = 0.5 * i - 1, "b" float64 [3] = 1 / (i + 3), metadata epoch=7.
"""
import json
import struct
import sys
import zlib

SIZES = {"F32": 4, "F64": 8, "U64": 8, "I64": 8, "U8": 1}
FORMATS = {"F32": "f", "F64": "d", "U64": "Q", "I64": "q", "U8": "B"}
NUMPY = {"F32": "<f4", "F64": "<f8", "U64": "<u8", "I64": "<i8", "U8": "u1"}

try:
    import numpy
except ImportError:  # struct alone suffices; numpy, when present, must agree with it
    numpy = None
try:
    import torch
except ImportError:  # the test decides whether torch was required
    torch = None
TORCH = {} if torch is None else {"F32": torch.float32, "F64": torch.float64}


def read(path, out_path):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header_bytes = blob[8 : 8 + n]
    header = json.loads(header_bytes.decode("utf-8"))
    data = blob[8 + n :]
    meta = header.pop("__metadata__", {})
    if "tapegrad.crc32" in meta:
        recorded = meta["tapegrad.crc32"]
        at = blob.index(b'"tapegrad.crc32":"') + len(b'"tapegrad.crc32":"')
        zeroed = blob[:at] + b"0" * 8 + blob[at + 8 :]
        actual = "%08x" % zlib.crc32(zeroed)
        assert actual == recorded, (actual, recorded)
    covered = 0
    lines = []
    for name, info in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"]):
        begin, end = info["data_offsets"]
        assert begin == covered, (name, begin, covered)
        covered = end
        dtype, shape = info["dtype"], info["shape"]
        count = 1
        for d in shape:
            count *= d
        assert end - begin == count * SIZES[dtype], name
        values = struct.unpack("<%d%s" % (count, FORMATS[dtype]), data[begin:end])
        text = [v.hex() if isinstance(v, float) else str(v) for v in values]
        if numpy is not None:
            np_values = numpy.frombuffer(data[begin:end], dtype=NUMPY[dtype]).tolist()
            assert [v.hex() if isinstance(v, float) else str(v) for v in np_values] == text, name
        if dtype in TORCH:
            # safetensors.torch.load_file: frombuffer over the bytes, then view with the shape.
            tensor = torch.frombuffer(bytearray(data[begin:end]), dtype=TORCH[dtype]).reshape(shape)
            assert list(tensor.shape) == shape, name
            assert [float(v).hex() for v in tensor.flatten().tolist()] == text, name
        lines.append(" ".join([name, dtype] + [str(d) for d in shape] + [":"] + text))
    assert covered == len(data), (covered, len(data))
    for key in sorted(meta):
        lines.append("meta %s %s" % (key, meta[key]))
    decoders = ["struct"] + (["numpy"] if numpy is not None else [])
    lines.append(" ".join(["decoders"] + decoders + (["torch"] if torch is not None else [])))
    with open(out_path, "w") as f:
        f.write("\n".join(lines) + "\n")


def write(path):
    w = [0.5 * i - 1 for i in range(6)]
    b = [1 / (i + 3) for i in range(3)]
    w_bytes = struct.pack("<6f", *w)
    b_bytes = struct.pack("<3d", *b)
    header = {
        "__metadata__": {"epoch": "7", "format": "pt"},
        "b": {"dtype": "F64", "shape": [3], "data_offsets": [0, len(b_bytes)]},
        "W": {"dtype": "F32", "shape": [2, 3],
              "data_offsets": [len(b_bytes), len(b_bytes) + len(w_bytes)]},
    }
    text = json.dumps(header, indent=1).encode("utf-8")
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b_bytes + w_bytes)


if __name__ == "__main__":
    if sys.argv[1] == "read":
        read(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "write":
        write(sys.argv[2])
    else:
        sys.exit("usage: checkpoint_interop.py read FILE OUT | write FILE")
