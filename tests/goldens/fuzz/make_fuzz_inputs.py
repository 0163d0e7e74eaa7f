#!/usr/bin/env python3
"""Writes the hand-made hostile checkpoints of tests/goldens/fuzz/ (hand_*.safetensors).

Each is a file the checkpoint loader must reject with a clean tapegrad::Error when loading into
tools/fuzz/fuzz_model.h's model (w F32 [4, 3], b F64 [4], empty F32 [0, 2], Adam, StepLR, a
generator "default"); tests/graph/test_fuzz_regressions.cpp replays them. Next to them, from
tools/fuzz/run_fuzz.sh: corpus_* (units the fuzzer generated that reach the loader's deepest
checks, copied from build-fuzz/fuzz/corpus/) and valid_* (valid checkpoints behind a fixed finding:
valid_adam_state_for_empty_param, the seed whose load made Adam memset a null buffer).
Run: /usr/bin/python3 tests/goldens/fuzz/make_fuzz_inputs.py
"""
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def framed(header_bytes, data=b""):
    return struct.pack("<Q", len(header_bytes)) + header_bytes + data


def safetensors(entries, metadata=None, raw_header=None):
    """entries: list of (name, dtype, shape, bytes); offsets laid out in order."""
    header = {}
    if metadata is not None:
        header["__metadata__"] = metadata
    data = b""
    for name, dtype, shape, blob in entries:
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(data), len(data) + len(blob)]}
        data += blob
    text = raw_header if raw_header is not None else json.dumps(header).encode()
    return framed(text, data)


def model_entries():
    return [("w", "F32", [4, 3], struct.pack("<12f", *range(12))),
            ("b", "F64", [4], struct.pack("<4d", 1, 2, 3, 4)),
            ("empty", "F32", [0, 2], b"")]


def rng_words(left=1, next_=0, seed_word_overflow=False):
    words = [0x54474D5431393901, 5, left, next_] + [7] * 624 + [0, 0]
    if seed_word_overflow:
        words[10] = 1 << 40
    return struct.pack("<630Q", *words)


ADAM_META = {"optim.optimizer": "Adam", "optim.step": "1", "optim.group.0.lr": "0.001",
             "optim.group.0.weight_decay": "0", "sched.step": "0", "sched.groups": "1",
             "sched.base_lr.0": "0.001"}


def adam_entries():
    return [("optim.param.%d.%s" % (i, slot), dt, shape, blob)
            for i, (dt, shape, blob) in enumerate([("F32", [4, 3], bytes(48)),
                                                   ("F64", [4], bytes(32)),
                                                   ("F32", [0, 2], b"")])
            for slot in ("exp_avg", "exp_avg_sq")]


CASES = {
    # framing and JSON
    "hand_header_length_max": struct.pack("<Q", 2**64 - 1) + b"{}",
    "hand_header_past_end": struct.pack("<Q", 9) + b"{}",
    "hand_deep_nesting": framed(b"{\"w\":" + b"[" * 5000 + b"]" * 5000 + b"}"),
    "hand_open_brackets": framed(b"[" * 20000),
    "hand_bom": framed(b"\xef\xbb\xbf{}"),
    "hand_nul_in_header": framed(b"{\"w\":{\"dtype\":\"F32\x00\"}}"),
    "hand_many_dims": safetensors([], raw_header=(
        b"{\"w\":{\"dtype\":\"F32\",\"shape\":[" + b",".join([b"1"] * 3000) +
        b"],\"data_offsets\":[0,4]}}")),
    "hand_offsets_overflow": framed(
        b"{\"w\":{\"dtype\":\"U8\",\"shape\":[1],"
        b"\"data_offsets\":[9223372036854775807,9223372036854775808]}}"),
    "hand_numel_overflow": framed(
        b"{\"w\":{\"dtype\":\"F64\",\"shape\":[3037000500,3037000500],\"data_offsets\":[0,8]}}"),
    "hand_lone_surrogate_key": framed(b"{\"\\udbff\":{}}"),
    # the loader
    "hand_wrong_dtype": safetensors([("w", "U64", [4, 3], bytes(96))] + model_entries()[1:]),
    "hand_rank5_param": safetensors([("w", "F32", [1, 1, 1, 4, 3], bytes(48))] +
                                    model_entries()[1:]),
    "hand_missing_param": safetensors(model_entries()[:2]),
    "hand_stray_tensor": safetensors(model_entries() + [("x", "F32", [1], bytes(4))]),
    "hand_rng_bad_position": safetensors(model_entries() +
                                         [("rng.default", "U64", [630], rng_words(3, 5))]),
    "hand_rng_word_overflow": safetensors(
        model_entries() + [("rng.default", "U64", [630], rng_words(seed_word_overflow=True))]),
    "hand_rng_wrong_shape": safetensors(model_entries() +
                                        [("rng.default", "U64", [629], bytes(8 * 629))]),
    "hand_optim_step_huge": safetensors(
        model_entries() + adam_entries() + [("rng.default", "U64", [630], rng_words())],
        dict(ADAM_META, **{"optim.step": "99999999999999999999999"})),
    "hand_optim_lr_nan": safetensors(
        model_entries() + adam_entries() + [("rng.default", "U64", [630], rng_words())],
        dict(ADAM_META, **{"optim.group.0.lr": "nan"})),
    "hand_optim_tensor_rank5": safetensors(
        model_entries() + adam_entries()[1:] +
        [("optim.param.0.exp_avg", "F32", [1, 1, 1, 4, 3], bytes(48)),
         ("rng.default", "U64", [630], rng_words())], ADAM_META),
    "hand_sched_groups_huge": safetensors(
        model_entries() + adam_entries() + [("rng.default", "U64", [630], rng_words())],
        dict(ADAM_META, **{"sched.groups": "1000000000000"})),
    "hand_tapegrad_without_crc": safetensors(model_entries(), {"tapegrad.format": "1"}),
    "hand_format_version_2": safetensors(model_entries(), {"tapegrad.format": "2"}),
}

if __name__ == "__main__":
    for name, blob in sorted(CASES.items()):
        with open(os.path.join(HERE, name + ".safetensors"), "wb") as f:
            f.write(blob)
    print("wrote %d inputs" % len(CASES))
