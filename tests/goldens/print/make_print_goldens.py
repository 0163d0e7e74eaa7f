# Writes print_goldens.txt: tensors and the exact repr() torch 1.13 gives them, for test_print.cpp.
#
# Run with the system interpreter that has Debian's torch 1.13:
#     /usr/bin/python3 tests/goldens/print/make_print_goldens.py
#
# In the suite's one golden format (tests/goldens/golden_format.py, read by tests/goldens.h), three
# records a case, named <group>/<name>:
#     <group>/<name> f32|f64 <shape> <values>   the tensor (its dtype gives the float64 suffix)
#     <group>/<name>:options txt <precision> <linewidth> <threshold> <edgeitems> none|true|false
#                                               (the last is sci_mode)
#     <group>/<name>:repr txt <repr(t)>
import math
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from golden_format import golden_line, text_line  # noqa: E402  the one golden format

DEFAULTS = dict(precision=4, linewidth=80, threshold=1000, edgeitems=3, sci_mode=None)
HERE = os.path.dirname(os.path.abspath(__file__))

cases = []
group_prefix = ""  # the group function being run; the C++ test has one TEST_CASE per group


def add(name, t, **options):
    name = group_prefix + "/" + name
    assert t.dtype in (torch.float32, torch.float64), name
    assert t.dim() <= 4, name
    cases.append((name, t.detach().clone(), {**DEFAULTS, **options}))


def seed_tensors():
    # The tensors of the seed notebooks (the book's chapter 3), computed the same way they were.
    inputs = torch.tensor(
        [[0.43, 0.15, 0.89],
         [0.55, 0.87, 0.66],
         [0.57, 0.85, 0.64],
         [0.22, 0.58, 0.33],
         [0.77, 0.25, 0.10],
         [0.05, 0.80, 0.55]]
    )
    add("inputs", inputs)
    query = inputs[1]
    attn_scores_2 = torch.empty(inputs.shape[0])
    for i, x in enumerate(inputs):
        attn_scores_2[i] = torch.dot(x, query)
    add("attn_scores_2", attn_scores_2)
    tmp = attn_scores_2 / attn_scores_2.sum()
    add("attn_weights_2_tmp", tmp)
    add("sum_1_0000", tmp.sum())
    attn_weights_2 = torch.softmax(attn_scores_2, dim=0)
    add("attn_weights_2", attn_weights_2)
    add("sum_1_dot", attn_weights_2.sum())
    context_vec_2 = torch.zeros(query.shape)
    for i, x in enumerate(inputs):
        context_vec_2 += attn_weights_2[i] * x
    add("context_vec_2", context_vec_2)
    attn_scores = inputs @ inputs.T
    add("attn_scores", attn_scores)
    attn_weights = torch.softmax(attn_scores, dim=-1)
    add("attn_weights", attn_weights)
    add("context_vecs", attn_weights @ inputs)
    torch.manual_seed(123)
    w_query = torch.rand(3, 2)
    add("w_query", w_query)
    add("query_2", query @ w_query)

    # Causal masking as in section 3.5: -inf above the diagonal, then softmax, then dropout.
    mask = torch.triu(torch.ones(6, 6), diagonal=1)
    masked = attn_scores.masked_fill(mask.bool(), -torch.inf)
    add("masked_scores", masked)
    add("masked_softmax", torch.softmax(masked / 3 ** 0.5, dim=-1))
    add("masked_ones", torch.ones(2, 3).masked_fill(torch.triu(torch.ones(2, 3), 1).bool(), -math.inf))
    add("masked_tril_zeros", torch.tril(torch.ones(6, 6)))
    torch.manual_seed(123)
    add("dropout_ones", torch.nn.Dropout(0.5)(torch.ones(6, 6)))
    torch.manual_seed(123)
    add("dropout_weights", torch.nn.Dropout(0.5)(attn_weights))


def special_values():
    inf, nan = math.inf, math.nan
    add("nan_in_floats", torch.tensor([0.5, nan, -1.25, inf]))
    add("nan_in_ints", torch.tensor([[1.0, nan], [-3.0, 4.0]]))
    add("negative_nan", torch.tensor([0.0, -1.0]) / 0)
    add("all_nan", torch.full((2, 2), nan))
    add("all_inf", torch.tensor([inf, -inf, inf]))
    add("all_zero", torch.zeros(2, 3))
    add("negative_zero", torch.tensor([-0.0, 0.0]))
    add("negative_zero_floats", torch.tensor([-0.0, 0.25]))
    add("zero_and_negative_int", torch.tensor([0.0, -5.0]))
    add("inf_wider_than_ints", torch.tensor([1.0, -inf, 22.0]))
    add("zero_wider_than_sci", torch.tensor([0.0, -inf, 1e-5, nan]))


def negatives():
    torch.manual_seed(0)
    add("randn_4x5", torch.randn(4, 5))
    add("randn_vector", torch.randn(7))
    add("mixed_sign_ints", torch.tensor([[-1.0, 20.0, -300.0], [4.0, 0.0, 6.0]]))
    add("negative_rounding_to_zero", torch.tensor([-0.00004999, 0.5, -0.12345]))


def sci_mode():
    add("big_ratio", torch.tensor([100000.0, 1.5, 3.0]))
    add("small", torch.tensor([1e-5, 0.5]))
    add("tiny_only", torch.tensor([3e-7]))
    add("over_1e8", torch.tensor([123456789.5, 200000000.25]))
    add("int_ratio", torch.tensor([1.0, 2000.0]))
    add("int_big", torch.tensor([[1e9, 2e9], [-3e9, 4e9]]))
    add("huge_exponent", torch.tensor([1e300, -2.5e-300], dtype=torch.float64))
    add("with_inf_nan", torch.tensor([1e-6, math.inf, math.nan, -2.0, 0.0]))
    torch.manual_seed(1)
    add("randn_scaled", torch.randn(3, 4) * 1e10)
    add("no_sci_ratio_exactly_1000", torch.tensor([0.001, 1.0]), )
    add("no_sci_ratio_1000_floats", torch.tensor([0.5, 500.0]))
    add("ratio_just_over_1000", torch.tensor([0.5, 500.25]))
    add("int_1e8", torch.tensor([1e8, 99999999.0], dtype=torch.float64))
    add("min_exactly_1e-4", torch.tensor([1e-4, 0.05], dtype=torch.float64))
    add("denormal", torch.tensor([5e-324, 1.0], dtype=torch.float64))
    add("float32_max", torch.tensor([3.4028234663852886e38, 1.0]))


def integers():
    add("small", torch.tensor([1.0, 2.0, 3.0]))
    add("big", torch.tensor([12345678.0, 99999999.0, -5.0]))
    add("arange_wrap", torch.arange(60.0))
    add("arange_1000", torch.arange(1000.0))
    add("arange_1001", torch.arange(1001.0))
    add("matrix", torch.arange(12.0).reshape(3, 4) - 6)


def ranks():
    torch.manual_seed(2)
    add("rank0_half", torch.tensor(0.5))
    add("rank0_zero", torch.tensor(0.0))
    add("rank0_negative", torch.tensor(-2.75))
    add("rank0_int", torch.tensor(7.0))
    add("rank0_neg_inf", torch.tensor(-math.inf))
    add("rank0_nan", torch.tensor(math.nan))
    add("rank0_sci_small", torch.tensor(1e-5))
    add("rank0_sci_big", torch.tensor(123456789.0))
    add("rank1_single", torch.tensor([0.3]))
    add("rank2_single", torch.tensor([[0.3]]))
    add("rank3", torch.rand(2, 3, 4))
    add("rank3_single_slice", torch.rand(1, 2, 2))
    add("rank4", torch.rand(2, 2, 3, 2))
    add("rank4_negative", torch.randn(2, 3, 2, 2))
    add("rank4_ones", torch.ones(1, 1, 1, 1))


def wrapping():
    torch.manual_seed(3)
    add("rand_40", torch.rand(40))
    add("randn_30", torch.randn(30))
    add("rows_3x25", torch.rand(3, 25))
    add("rank3_rows", torch.randn(2, 2, 15))
    add("rank4_rows", torch.rand(2, 1, 2, 14))
    add("scaled_1e6_vector", torch.rand(12) * 1e6)
    add("exactly_one_line", torch.rand(12))
    add("one_more_than_line", torch.rand(13))


def summarized():
    torch.manual_seed(4)
    add("rank3", torch.rand(3, 20, 20))
    add("rank1", torch.randn(1500))
    add("rank2", torch.rand(35, 35))
    add("rank2_short_rows", torch.rand(400, 3))
    add("rank2_long_rows", torch.rand(2, 600))
    add("rank4", torch.rand(2, 3, 14, 14))
    add("rank4_all_big", torch.randn(7, 7, 5, 5))
    x = torch.rand(30, 40)
    x[15, 20] = 1e-6  # hidden by "...", so it must not switch on sci mode
    x[0, 0] = -0.5
    add("hidden_small", x)
    y = torch.arange(1200.0).reshape(40, 30)
    add("ints", y)
    z = torch.rand(1100)
    z[500] = math.nan
    add("hidden_nan", z)


def empties():
    add("1d", torch.zeros(0))
    add("0x3", torch.zeros(0, 3))
    add("3x0", torch.zeros(3, 0))
    add("2x0x3", torch.zeros(2, 0, 3))
    add("rank4", torch.zeros(1, 2, 0, 4))
    add("1d_f64", torch.zeros(0, dtype=torch.float64))
    add("0x3_f64", torch.zeros(0, 3, dtype=torch.float64))


def float64():
    torch.manual_seed(5)
    add("rand_2x3", torch.rand(2, 3, dtype=torch.float64))
    add("scalar", torch.tensor(1 / 3, dtype=torch.float64))
    add("scalar_int", torch.tensor(1.0, dtype=torch.float64))
    add("vector_suffix_fits", torch.rand(8, dtype=torch.float64))
    add("vector_suffix_wraps", torch.rand(9, dtype=torch.float64))
    add("vector_long", torch.rand(40, dtype=torch.float64))
    add("rank3", torch.randn(2, 2, 2, dtype=torch.float64))
    add("summary", torch.randn(30, 50, dtype=torch.float64))
    add("rounding", torch.tensor([0.12345, 0.00015, 2.5e-4, 0.99995, 1.00005], dtype=torch.float64))
    add("rounding_fixed", torch.tensor([0.12345, 0.99995, 1.00005, 0.01125, -0.00555], dtype=torch.float64))
    # The same decimals rounded to float32 first: the digits follow the float32 value.
    add("rounding_as_float32", torch.tensor([0.12345, 0.99995, 1.00005, 0.01125, -0.00555]))
    add("ties", torch.tensor([0.5, 1.5, 2.5, -0.5], dtype=torch.float64) / 1000 + 1)
    add("sci_scalar", torch.tensor(1e-9, dtype=torch.float64))
    add("nan_inf", torch.tensor([math.nan, -math.inf], dtype=torch.float64))


def options():
    torch.manual_seed(6)
    x = torch.randn(4, 6)
    add("precision_2", x, precision=2)
    add("precision_0", x, precision=0)
    add("precision_8_f64", torch.rand(3, dtype=torch.float64), precision=8)
    add("linewidth_40", torch.rand(20), linewidth=40)
    add("linewidth_tiny", torch.rand(2, 3), linewidth=5)
    add("linewidth_suffix", torch.rand(5, dtype=torch.float64), linewidth=40)
    add("threshold_10", torch.arange(30.0).reshape(5, 6), threshold=10)
    add("edgeitems_1", torch.rand(5, 5, 5), edgeitems=1, threshold=10)
    add("edgeitems_0_vector", torch.arange(20.0), threshold=5, edgeitems=0)
    add("sci_true", x, sci_mode=True)
    add("sci_true_ints", torch.tensor([1.0, 20.0, -300.0]), sci_mode=True)
    add("sci_true_zeros", torch.zeros(3), sci_mode=True)
    add("sci_false", torch.tensor([1e-6, 1.0, 12345.0]), sci_mode=False)
    add("sci_false_ints", torch.tensor([1.0, 1e9]), sci_mode=False)


def main():
    global group_prefix
    groups = dict(seed=seed_tensors, special=special_values, negative=negatives, sci=sci_mode,
                  int=integers, rank=ranks, wrap=wrapping, summary=summarized, empty=empties,
                  f64=float64, options=options)
    for prefix, group in groups.items():
        group_prefix = prefix
        group()
    names = [name for name, _, _ in cases]
    assert len(names) == len(set(names)), "duplicate case names"
    lines = ["# Generated by make_print_goldens.py with torch " + torch.__version__ + "; do not edit."]
    for name, t, opts in cases:
        torch.set_printoptions(precision=opts["precision"], threshold=opts["threshold"],
                               edgeitems=opts["edgeitems"], linewidth=opts["linewidth"],
                               sci_mode=opts["sci_mode"])
        expected = repr(t)
        torch.set_printoptions(profile="default", sci_mode=None)
        sci = {None: "none", True: "true", False: "false"}[opts["sci_mode"]]
        lines += [
            golden_line(name, t),
            text_line(name + ":options", "%d %d %d %d %s" % (
                opts["precision"], opts["linewidth"], opts["threshold"], opts["edgeitems"], sci)),
            text_line(name + ":repr", expected),
        ]
    with open(os.path.join(HERE, "print_goldens.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote %d cases" % len(cases))


if __name__ == "__main__":
    main()
