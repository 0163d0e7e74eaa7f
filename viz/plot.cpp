// Attention heatmaps with gnuplot as a child process (see viz/plot.h).
#include <tapegrad/viz/plot.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <system_error>

#include <tapegrad/graph/error.h>
#include <tapegrad/io/atomic_file.h>
#include <tapegrad/io/safetensors.h>

extern char** environ;

namespace tapegrad {
namespace {

namespace fs = std::filesystem;

// The executable to run: TAPEGRAD_GNUPLOT (a path, or a name looked up on PATH), else "gnuplot"
// on PATH. Empty when there is none.
std::string find_gnuplot() {
  const char* chosen = std::getenv("TAPEGRAD_GNUPLOT");
  const std::string name = chosen != nullptr && *chosen != '\0' ? chosen : "gnuplot";
  if (name.find('/') != std::string::npos) {
    return access(name.c_str(), X_OK) == 0 ? name : std::string();
  }
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

// A gnuplot single-quoted string: backslashes are literal there, a quote is doubled.
std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

// The length of the valid UTF-8 character starting at s[i] (2-4 bytes), or 0.
size_t utf8_length(const std::string& s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char lead = byte(i);
  size_t n = 0;
  if (lead >= 0xC2 && lead <= 0xDF) n = 2;
  if (lead >= 0xE0 && lead <= 0xEF) n = 3;
  if (lead >= 0xF0 && lead <= 0xF4) n = 4;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  }
  // Overlong forms and surrogates are not characters.
  if (lead == 0xE0 && byte(i + 1) < 0xA0) return 0;
  if (lead == 0xED && byte(i + 1) > 0x9F) return 0;
  if (lead == 0xF0 && byte(i + 1) < 0x90) return 0;
  if (lead == 0xF4 && byte(i + 1) > 0x8F) return 0;
  return n;
}

// A token as a tick label: spaces visible, control characters and stray bytes escaped.
std::string label(const std::string& token) {
  std::string out;
  char hex[8];
  for (size_t i = 0; i < token.size();) {
    const auto c = static_cast<unsigned char>(token[i]);
    if (c == ' ') {
      out += "\u2423";  // ␣
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7F) {
      std::snprintf(hex, sizeof hex, "\\x%02X", c);
      out += hex;
    } else if (c < 0x80) {
      out += static_cast<char>(c);
    } else if (const size_t n = utf8_length(token, i); n > 0) {
      out += token.substr(i, n);
      i += n;
      continue;
    } else {
      std::snprintf(hex, sizeof hex, "\\x%02X", c);
      out += hex;
    }
    ++i;
  }
  return out.empty() ? std::string("\u2205") : out;  // ∅ for an empty token
}

// A temporary directory removed (with what is in it) when this goes out of scope.
class TempDir {
 public:
  explicit TempDir(const char* who) {
    std::string pattern = (fs::temp_directory_path() / "tapegrad-plot-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      throw Error(std::string(who) + ": cannot create a temporary directory like " + pattern);
    }
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

// Runs `gnuplot script` with stdout and stderr into log; returns its exit status (-1: killed).
int run(const std::string& gnuplot, const fs::path& script, const fs::path& log, const char* who) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::string arg0 = gnuplot, arg1 = script.string();
  char* argv[] = {arg0.data(), arg1.data(), nullptr};
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, gnuplot.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    throw Error(std::string(who) + ": cannot run " + gnuplot + ": " +
                std::error_code(spawned, std::generic_category()).message());
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw Error(std::string(who) + ": waiting for " + gnuplot + " failed");
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string read_head(const fs::path& path, size_t limit) {
  std::ifstream in(path, std::ios::binary);
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  return text.size() > limit ? text.substr(0, limit) + "..." : text;
}

// Runs the script and moves the PNG it drew to png_path (a copy beside it, then a rename: png_path
// is never half written).
void draw(const std::string& gnuplot, const TempDir& dir, const fs::path& script,
          const fs::path& png, const std::string& png_path, const char* who) {
  const fs::path log = dir.path() / "gnuplot.log";
  const int status = run(gnuplot, script, log, who);
  std::error_code ec;
  if (status != 0 || !fs::exists(png, ec) || fs::file_size(png, ec) == 0) {
    throw Error(std::string(who) + ": " + gnuplot + " failed (exit status " +
                std::to_string(status) + ") drawing " + png_path + ":\n" + read_head(log, 2000));
  }
  // Copied into place atomically: png_path is never half written.
  write_file_atomically(png_path, read_whole_file(png.string()));
}

std::string require_gnuplot(const std::string& png_path, const char* who) {
  const std::string gnuplot = find_gnuplot();
  if (gnuplot.empty()) {
    throw Error(std::string(who) +
                ": gnuplot not found (install Debian's gnuplot-nox, or set "
                "TAPEGRAD_GNUPLOT to its path); no " +
                png_path + " written");
  }
  return gnuplot;
}

}  // namespace

void plot_attention(const std::string& png_path, const Shape& shape,
                    std::span<const double> weights, const std::vector<std::string>& tokens,
                    const std::string& title) {
  // --- checks, before anything runs -------------------------------------------------------------
  if (shape.rank() != 3 || shape.size(1) != shape.size(2) || shape.numel() == 0) {
    throw Error("plot_attention: weights " + shape.str() +
                " must be [H, T, T] (heads, query tokens, key tokens) with H, T > 0");
  }
  const int64_t H = shape.size(0), T = shape.size(1);
  if (static_cast<int64_t>(weights.size()) != shape.numel()) {
    throw Error("plot_attention: weights " + shape.str() + " needs " +
                std::to_string(shape.numel()) + " values, got " + std::to_string(weights.size()));
  }
  if (static_cast<int64_t>(tokens.size()) != T) {
    throw Error("plot_attention: " + std::to_string(tokens.size()) + " tokens for weights " +
                shape.str() + ", which has T = " + std::to_string(T));
  }
  for (size_t i = 0; i < weights.size(); ++i) {
    if (!std::isfinite(weights[i])) {
      throw Error("plot_attention: weights " + shape.str() + " hold a non-finite value (" +
                  std::to_string(weights[i]) + ") at flat index " + std::to_string(i));
    }
  }
  if (png_path.empty()) throw Error("plot_attention: png_path is empty");
  const std::string gnuplot = require_gnuplot(png_path, "plot_attention");

  // --- the data (one matrix file per head) and the script ---------------------------------------
  TempDir dir("plot_attention");
  for (int64_t h = 0; h < H; ++h) {
    std::ostringstream data;
    data.precision(6);
    for (int64_t i = 0; i < T; ++i) {
      for (int64_t j = 0; j < T; ++j) {
        data << (j > 0 ? " " : "") << weights[static_cast<size_t>((h * T + i) * T + j)];
      }
      data << "\n";
    }
    write_file_atomically((dir.path() / ("head" + std::to_string(h) + ".txt")).string(),
                          data.str());
  }

  const int64_t cols = std::min<int64_t>(H, 4), rows = (H + cols - 1) / cols;
  const int64_t cell = T <= 12 ? 56 : T <= 48 ? 16 : 8;  // pixels per token
  const int64_t every = T <= 64 ? 1 : (T + 63) / 64;     // label every k-th token
  const int64_t longest = [&] {
    size_t n = 0;
    for (const std::string& t : tokens) n = std::max(n, label(t).size());
    return static_cast<int64_t>(std::min<size_t>(n, 16));
  }();
  const int64_t margin = 60 + 7 * longest;  // room for the tick labels
  const int64_t panel = T * cell + margin + 60;
  const int64_t width = cols * panel + 90, height = rows * panel + (title.empty() ? 20 : 50);

  std::ostringstream tics;
  for (int64_t t = 0; t < T; t += every) {
    tics << (t > 0 ? ", " : "") << quoted(label(tokens[static_cast<size_t>(t)])) << " " << t;
  }
  const fs::path png = dir.path() / "attention.png";
  std::ostringstream gp;
  gp << "set terminal pngcairo size " << width << "," << height << " font 'DejaVu Sans,"
     << (T <= 48 ? 10 : 8) << "' noenhanced\n"
     << "set output " << quoted(png.string()) << "\n"
     << "set palette defined (0 '#ffffff', 0.5 '#6baed6', 1 '#08306b')\n"
     << "set cbrange [0:1]\nunset key\nset size ratio -1\nset tics scale 0\n"
     << "set xrange [-0.5:" << T - 0.5 << "]\nset yrange [" << T - 0.5 << ":-0.5]\n"
     << "set xtics (" << tics.str() << ") rotate by 60 right\n"
     << "set ytics (" << tics.str() << ")\n"
     << "set xlabel 'key'\nset ylabel 'query'\n"
     << "set multiplot layout " << rows << "," << cols;
  if (!title.empty()) gp << " title " << quoted(title);
  gp << "\n";
  for (int64_t h = 0; h < H; ++h) {
    gp << "set title 'head " << h << "'\n"
       << "plot " << quoted((dir.path() / ("head" + std::to_string(h) + ".txt")).string())
       << " matrix with image";
    if (T <= 12) {  // the weights printed in the cells (not exact zeros), white on dark ones
      gp << ", '' matrix using 1:2:($3 == 0 ? '' : sprintf('%.2f', $3))"
            ":($3 > 0.55 ? 0xffffff : 0x000000) "
            "with labels textcolor rgb variable font ',9'";
    }
    gp << "\n";
  }
  gp << "unset multiplot\nset output\n";
  const fs::path script = dir.path() / "attention.gp";
  write_file_atomically(script.string(), gp.str());
  draw(gnuplot, dir, script, png, png_path, "plot_attention");
}

void plot_values(const std::string& png_path, std::span<const double> epochs_seen,
                 std::span<const double> examples_seen, std::span<const double> train_values,
                 std::span<const double> val_values, const std::string& label,
                 const std::string& x2_label) {
  const size_t n = train_values.size();
  if (n == 0 || epochs_seen.size() != n || examples_seen.size() != n || val_values.size() != n) {
    throw Error(
        "plot_values: epochs_seen, examples_seen, train_values and val_values need the "
        "same number of points (at least one), got " +
        std::to_string(epochs_seen.size()) + ", " + std::to_string(examples_seen.size()) + ", " +
        std::to_string(n) + ", " + std::to_string(val_values.size()));
  }
  if (png_path.empty()) throw Error("plot_values: png_path is empty");
  const std::string gnuplot = require_gnuplot(png_path, "plot_values");
  TempDir dir("plot_values");
  std::ostringstream data;
  data.precision(17);
  for (size_t i = 0; i < n; ++i) {
    data << epochs_seen[i] << " " << examples_seen[i] << " " << train_values[i] << " "
         << val_values[i] << "\n";
  }
  const fs::path values = dir.path() / "values.txt";
  write_file_atomically(values.string(), data.str());
  std::string capitalized = label;
  if (!capitalized.empty()) capitalized[0] = static_cast<char>(std::toupper(capitalized[0]));
  const fs::path png = dir.path() / "values.png";
  std::ostringstream gp;
  gp << "set terminal pngcairo size 800,480 font 'DejaVu Sans,10' noenhanced\n"
     << "set output " << quoted(png.string()) << "\n"
     << "set xlabel 'Epochs'\nset ylabel " << quoted(capitalized) << "\n"
     << "set x2label " << quoted(x2_label) << "\nset xtics nomirror\nset x2tics\nset grid\n"
     << "set key top right\n";
  // The second axis spans the same points: examples (or tokens) seen at the first and last.
  gp << "set xrange [" << epochs_seen.front() << ":" << epochs_seen.back() << "]\n"
     << "set x2range [" << examples_seen.front() << ":" << examples_seen.back() << "]\n";
  if (epochs_seen.front() == epochs_seen.back()) gp << "set autoscale x\nset autoscale x2\n";
  gp << "plot " << quoted(values.string()) << " using 1:3 with linespoints title "
     << quoted("Training " + label) << ", '' using 1:4 with linespoints dashtype 2 title "
     << quoted("Validation " + label) << "\nset output\n";
  const fs::path script = dir.path() / "values.gp";
  write_file_atomically(script.string(), gp.str());
  draw(gnuplot, dir, script, png, png_path, "plot_values");
}

}  // namespace tapegrad
