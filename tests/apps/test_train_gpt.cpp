// Tests for apps/train_gpt.cpp, run as a program: a short run writes every file, a run killed
// with SIGKILL and resumed ends exactly where the uninterrupted run ends, bad input is refused
// with a clear message and leaves the checkpoint alone. A tiny model (C 16, one block, T 16) on a
// few KB of text keeps them fast.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <tapegrad/io/atomic_file.h>
#include "tests/apps/run_program.h"
#include "tests/examples/chapter3_goldens.h"

namespace fs = std::filesystem;
using tapegrad::testing::chapter3::app_binary;
using tapegrad::testing::chapter3::run_program;

namespace {

const std::string kTrainGptArgs =
    " --preset tiny --context-length 16 --emb-dim 16 --n-heads 2 --n-layers 1 --batch-size 2"
    " --eval-freq 1 --eval-iter 2 --sample-tokens 8 --prompt The";

std::string train_gpt_scratch(const std::string& name) {
  return tapegrad::testing::scratch_dir("train_gpt_test", name);
}

// Atomically: the test cases run as processes in parallel and share data_file()'s path, so a
// plain rewrite could be read half-written (empty) by another case.
void write(const std::string& path, const std::string& text) {
  tapegrad::write_file_atomically(path, text);
}

// A few KB of varied English text.
std::string data_file() {
  const std::string path = std::string(TAPEGRAD_BINARY_DIR) + "/train_gpt_test_data.txt";
  std::string text;
  const char* lines[] = {"In the beginning was the word, and the word was with the reader.\n",
                         "The quick brown fox jumps over the lazy dog; then it rests.\n",
                         "Every effort moves you, said the painter, and smiled at the canvas.\n",
                         "Numbers like 42 and 1611 appear here and there, as do commas.\n"};
  for (int i = 0; i < 40; ++i) text += lines[(i * 7 + i / 3) % 4];
  write(path, text);
  return path;
}

using Result = tapegrad::testing::CommandResult;

Result train_gpt(const std::string& args) {
  int status = -1;
  const std::string command = app_binary("tapegrad-train-gpt") + " " + args + " 2>&1";
  std::string output = run_program(command, &status);
  return {status, "command: " + command + "\n" + output};
}

}  // namespace

TEST_CASE("example train_gpt: a short run writes loss.csv, samples.txt, the checkpoint, the plots",
          "[examples][train_gpt]") {
  const std::string out = train_gpt_scratch("short");
  const Result r = train_gpt(kTrainGptArgs + " --data " + data_file() + " --steps 6 --out " + out);
  INFO(r.output);
  REQUIRE(r.status == 0);
  CHECK(r.output.find("Train loss") != std::string::npos);
  const std::string csv = tapegrad::testing::read_text_file(out + "/loss.csv");
  CHECK(csv.rfind("step,train_loss,val_loss,tokens_seen\n", 0) == 0);
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 7);  // header + steps 1..6
  CHECK(tapegrad::testing::read_text_file(out + "/samples.txt").find("The") != std::string::npos);
  CHECK(fs::file_size(out + "/checkpoint.safetensors") > 0);
  if (std::system("gnuplot --version > /dev/null 2>&1") == 0) {
    CHECK(tapegrad::testing::read_text_file(out + "/loss.png").rfind("\x89PNG", 0) == 0);
    CHECK(tapegrad::testing::read_text_file(out + "/attention.png").rfind("\x89PNG", 0) == 0);
    CHECK(r.output.find("wrote " + out + "/attention.png") != std::string::npos);
  }
}

TEST_CASE("example train_gpt: --checkpoint-activations gives the same losses and weights",
          "[examples][train_gpt]") {
  const std::string args = kTrainGptArgs + " --n-layers 2 --data " + data_file() + " --steps 4";
  const std::string plain = train_gpt_scratch("activations_plain");
  const std::string ckpt = train_gpt_scratch("activations_checkpointed");
  const Result a = train_gpt(args + " --no-plot --out " + plain);
  const Result b = train_gpt(args + " --no-plot --checkpoint-activations --out " + ckpt);
  INFO(a.output << b.output);
  REQUIRE(a.status == 0);
  REQUIRE(b.status == 0);
  using tapegrad::testing::read_text_file;
  CHECK(read_text_file(plain + "/loss.csv") == read_text_file(ckpt + "/loss.csv"));
  // The weights and AdamW's moments, byte for byte.
  CHECK(read_text_file(plain + "/checkpoint.safetensors") ==
        read_text_file(ckpt + "/checkpoint.safetensors"));
}

TEST_CASE("example train_gpt: killed with SIGKILL, --resume ends exactly as the uninterrupted run",
          "[examples][train_gpt]") {
  const std::string data = data_file();
  const std::string args = kTrainGptArgs + " --no-plot --data " + data + " --steps 300";
  const std::string full = train_gpt_scratch("full"), killed = train_gpt_scratch("killed");
  const Result reference = train_gpt(args + " --out " + full);
  INFO(reference.output);
  REQUIRE(reference.status == 0);

  // The same run, killed right after its first checkpoint (step 5).
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    freopen("/dev/null", "w", stdout);
    freopen("/dev/null", "w", stderr);
    const std::string binary = app_binary("tapegrad-train-gpt");
    std::vector<std::string> words;
    std::istringstream split(args + " --checkpoint-every 5 --out " + killed);
    for (std::string w; split >> w;) words.push_back(w);
    std::vector<char*> argv{const_cast<char*>(binary.c_str())};
    for (std::string& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    execv(binary.c_str(), argv.data());
    _exit(127);
  }
  const std::string ckpt = killed + "/checkpoint.safetensors";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (!fs::exists(ckpt) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  REQUIRE(fs::exists(ckpt));
  REQUIRE(WIFSIGNALED(status));  // killed mid-run, not finished

  const Result resumed = train_gpt(args + " --checkpoint-every 5 --resume --out " + killed);
  INFO(resumed.output);
  REQUIRE(resumed.status == 0);
  CHECK(resumed.output.find("resumed") != std::string::npos);
  // Every loss (printed with 17 digits), the tokens seen, and the final weights, AdamW moments,
  // generators and data position: identical.
  CHECK(tapegrad::testing::read_text_file(killed + "/loss.csv") ==
        tapegrad::testing::read_text_file(full + "/loss.csv"));
  CHECK(tapegrad::testing::read_text_file(killed + "/checkpoint.safetensors") ==
        tapegrad::testing::read_text_file(full + "/checkpoint.safetensors"));
}

TEST_CASE("example train_gpt: bad data files and options are clear errors",
          "[examples][train_gpt]") {
  const std::string out = train_gpt_scratch("bad");
  const std::string dir = std::string(TAPEGRAD_BINARY_DIR) + "/train_gpt_test";
  const std::string empty = dir + "/empty.txt", binary = dir + "/binary.bin",
                    shorter = dir + "/short.txt";
  write(empty, "");
  write(binary, std::string("PK\x03\x04\0\0\x14\0", 8) + std::string(200, '\x01'));
  write(shorter, "Too short for a window.");
  const struct {
    std::string args, needle;
  } cases[] = {
      {kTrainGptArgs + " --data " + dir + "/missing.txt", "missing.txt: no such file"},
      {kTrainGptArgs + " --data " + empty, "empty.txt: the file is empty"},
      {kTrainGptArgs + " --data " + binary, "binary.bin: not a text file"},
      {kTrainGptArgs + " --data " + shorter,
       "short.txt: the validation part is too short for one window"},
      {"--preset nope --data " + data_file(), "--preset"},
      {kTrainGptArgs + " --steps abc", "--steps"},
      {kTrainGptArgs + " --tokenizer words", "--tokenizer"},
      {kTrainGptArgs + " --resume --data " + data_file(), "no checkpoint at"},
  };
  for (const auto& c : cases) {
    const Result r = train_gpt(c.args + " --steps 2 --out " + out);
    INFO(r.output);
    CHECK(r.status != 0);
    CHECK(r.output.find(c.needle) != std::string::npos);
    CHECK_FALSE(fs::exists(out + "/checkpoint.safetensors"));
  }
}

TEST_CASE("example train_gpt: --resume with a checkpoint of another config changes nothing",
          "[examples][train_gpt]") {
  const std::string out = train_gpt_scratch("other");
  const std::string args =
      kTrainGptArgs + " --no-plot --data " + data_file() + " --steps 3 --out " + out;
  REQUIRE(train_gpt(args).status == 0);
  const std::string ckpt = tapegrad::testing::read_text_file(out + "/checkpoint.safetensors"),
                    csv = tapegrad::testing::read_text_file(out + "/loss.csv");
  for (const std::string change : {" --emb-dim 32", " --lr 0.01", " --seed 7"}) {
    const Result r = train_gpt(args + change + " --resume");
    INFO(r.output);
    CHECK(r.status != 0);
    CHECK(r.output.find(out + "/checkpoint.safetensors is a checkpoint of another "
                              "configuration") != std::string::npos);
    CHECK(tapegrad::testing::read_text_file(out + "/checkpoint.safetensors") == ckpt);
    CHECK(tapegrad::testing::read_text_file(out + "/loss.csv") == csv);
  }
}
