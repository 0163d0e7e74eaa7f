// The command-line pieces tapegrad's programs share (on CLI11): validators whose messages name
// the option, and one way to parse that answers --help with exit 0 and bad input with exit 2.
// Installed as <tapegrad/cli/cli.h>; a program using it links tapegrad::cli (CLI11).
#pragma once

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>

#include <tapegrad/graph/error.h>
#include <tapegrad/kernels/gemm/matmul_precision.h>

namespace tapegrad::cli {

// Exit status of a program given a malformed or unknown option (as before CLI11: 2).
inline constexpr int kUsageError = 2;

namespace detail {
// The number `text` spells (strtod, whole string), or nullopt.
inline std::optional<double> number(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size()) return std::nullopt;
  return v;
}

template <class Accept>
CLI::Validator number_check(std::string description, std::string what, Accept accept) {
  return CLI::Validator(
      [what, accept](std::string& text) -> std::string {
        // Not a number is refused here too, not left to CLI11's conversion: with a TakeLast
        // policy that would only convert the last of repeated values.
        const std::optional<double> v = number(text);
        if (v && accept(*v)) return "";
        return "must be " + what + ", got " + text;
      },
      std::move(description));
}
}  // namespace detail

// Counts and sizes: 1, 2, ... (CLI11 already refuses 1.5, 1e99 and 99999999999 for an int).
inline CLI::Validator positive() {
  return detail::number_check("POSITIVE", "a positive integer", [](double v) { return v > 0; });
}
// 0, 1, 2, ...
inline CLI::Validator non_negative() {
  return detail::number_check("NON-NEGATIVE", "zero or more", [](double v) { return v >= 0; });
}
// A finite number greater than zero (learning rates, factors).
inline CLI::Validator positive_finite() {
  return detail::number_check("POSITIVE", "a finite number above 0",
                              [](double v) { return std::isfinite(v) && v > 0; });
}
// A finite number of at least zero (temperatures, weight decays, clipping norms; 0 often: off).
inline CLI::Validator non_negative_finite() {
  return detail::number_check("NON-NEGATIVE", "a finite number >= 0",
                              [](double v) { return std::isfinite(v) && v >= 0; });
}
// A dropout probability: 0 <= p < 1, as the dropout op accepts.
inline CLI::Validator probability() {
  return detail::number_check("IN [0, 1)", "in [0, 1)", [](double v) { return v >= 0 && v < 1; });
}
// A number in [least, most], both bounds written as a person would ("in [1, 256]"), where
// CLI::Range(0.0, 0.999) says "0.000000 to 0.999000" and a bound of max() has 300 digits.
inline CLI::Validator in_range(double least, double most) {
  auto shortest = [](double v) {
    if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<int64_t>(v));
    std::ostringstream s;
    s << v;  // 0.999, 1e+300
    return s.str();
  };
  const std::string range = "in [" + shortest(least) + ", " + shortest(most) + "]";
  return detail::number_check("IN [" + shortest(least) + ", " + shortest(most) + "]", range,
                              [least, most](double v) { return v >= least && v <= most; });
}

// --matmul-precision, the same option in every program that trains: "highest" (float32 products)
// or "bf16" (bfloat16-rounded operands, float32 sums; kernels/gemm/matmul_precision.h). The option
// keeps the name in `name` (programs print it); matmul_precision_named turns it into the enum.
inline constexpr const char* kMatmulPrecisionHelp =
    "bf16: every float32 product takes bfloat16-rounded operands and sums in float32 "
    "(torch's set_float32_matmul_precision(\"medium\")); highest: float32";
inline CLI::Option* add_matmul_precision(CLI::App& app, std::string& name) {
  return app.add_option("--matmul-precision", name, kMatmulPrecisionHelp)
      ->check(CLI::IsMember({"highest", "bf16"}));
}
// "highest" -> Highest, "bf16" -> BFloat16; anything else is an Error naming the option.
inline MatmulPrecision matmul_precision_named(const std::string& name) {
  if (name == "highest") return MatmulPrecision::Highest;
  if (name == "bf16") return MatmulPrecision::BFloat16;
  throw Error("--matmul-precision must be highest or bf16, not \"" + name + "\"");
}

namespace detail {
// Every option of `app` and its subcommands shows its default in --help: the value its variable
// holds before parsing (an option without a value, such as a flag or an empty text, shows none).
inline void show_defaults(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) option->capture_default_str();
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) show_defaults(*sub);
}
}  // namespace detail

// Parses argv into `app`. --help: prints the help, every option with its default, returns 0. A
// malformed, missing or unknown option: prints "program: message" and a pointer to --help on
// stderr, returns kUsageError. nullopt: the options are set, the program goes on.
inline std::optional<int> parse(CLI::App& app, int argc, const char* const* argv) {
  detail::show_defaults(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << app.get_name() << ": " << e.what() << "\n(" << app.get_name()
              << " --help lists the options)\n";
    return kUsageError;
  }
  return std::nullopt;
}

// An error as a program prints it: "program: what", or `what` unchanged when it already begins
// with "program: " (messages thrown with the program's name and option in them).
inline std::string error_message(const std::string& program, const std::string& what) {
  const std::string prefix = program + ": ";
  return what.rfind(prefix, 0) == 0 ? what : prefix + what;
}

// Runs a program's work once its options are parsed: returns body()'s exit status; any exception
// (tapegrad::Error, std::filesystem::filesystem_error, ...) becomes error_message on stderr and
// `error_status`.
template <class Body>
int run(const std::string& program, Body body, int error_status = 1) {
  try {
    return body();
  } catch (const std::exception& e) {
    std::cerr << error_message(program, e.what()) << "\n";
    return error_status;
  }
}

// Creates the folder an option names (and its parents), as --out DIR does. Throws Error naming
// the option, the folder and the system's reason ("--out: cannot create directory a/b: Not a
// directory"), not std::filesystem's bare message.
inline void create_directories(const std::string& option, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (!ec && !std::filesystem::is_directory(dir, ec)) {
    ec = std::make_error_code(std::errc::not_a_directory);
  }
  if (ec) throw Error(option + ": cannot create directory " + dir + ": " + ec.message());
}

}  // namespace tapegrad::cli
