// Plots with gnuplot: attention heatmaps (one panel per head) and the book's training curves.
#pragma once

#include <span>
#include <string>
#include <vector>

#include <tapegrad/graph/shape.h>

namespace tapegrad {

// Draws attention weights `weights` of shape [H, T, T] (row-major; row i of head h holds query
// token i's weights over the key tokens, as nn::MultiHeadAttention::last_attention().sequence(b)
// gives them) as H heatmaps side by side (up to 4 per row), each with the T tokens on both axes
// (queries down the left, keys along the bottom), colours from 0 (white) to 1 (dark blue) and,
// when T <= 12, the weight printed in each non-zero cell. `tokens` are the T token texts: spaces
// are shown as ␣, control characters and bytes that are not UTF-8 as escapes (\n, \x80). `title`
// goes above the panels (none when empty).
//
// Runs gnuplot (Debian's gnuplot-nox; the TAPEGRAD_GNUPLOT environment variable names another
// executable) as a child process on a script and data files in a temporary directory, which is
// removed afterwards; the PNG is written there and then moved to png_path, so a failed run leaves
// an existing png_path as it was.
//
// Throws Error, before running anything, when the shape is not [H, T, T], weights has not
// H·T·T values, a weight is not finite, tokens has not T entries or png_path is empty; and
// after, when gnuplot is missing (saying to install gnuplot-nox), fails (with its messages), or
// png_path cannot be written.
void plot_attention(const std::string& png_path, const Shape& shape,
                    std::span<const double> weights, const std::vector<std::string>& tokens,
                    const std::string& title = "");

// The book's plot_values (chapter 6; chapter 5's plot_losses is the same figure): training and
// validation `label` ("loss", "accuracy") against epochs, with a second x axis of examples (or
// tokens) seen, to a PNG with gnuplot as plot_attention runs it. Throws Error, before running
// anything, unless the four series have the same number of points (at least one) and png_path
// is not empty; then as plot_attention when gnuplot is missing or fails.
void plot_values(const std::string& png_path, std::span<const double> epochs_seen,
                 std::span<const double> examples_seen, std::span<const double> train_values,
                 std::span<const double> val_values, const std::string& label = "loss",
                 const std::string& x2_label = "Examples seen");

}  // namespace tapegrad
