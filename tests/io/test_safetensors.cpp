// Tests for io/safetensors.cpp: the strict header parser, offset validation, CRC, the writer.
#include <tapegrad/io/safetensors.h>

#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <tapegrad/graph/error.h>

using namespace tapegrad;
using Catch::Contains;

namespace {

// A file from a header text and a data buffer.
std::vector<uint8_t> make_file(const std::string& header, const std::string& data = "") {
  std::string f(8, '\0');
  const uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) f[static_cast<size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xFF);
  f += header;
  f += data;
  return std::vector<uint8_t>(f.begin(), f.end());
}

std::string parse_error(const std::vector<uint8_t>& file) {
  try {
    parse_safetensors(file, "f.safetensors");
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

const std::string kOneF32 = R"({"x":{"dtype":"F32","shape":[],"data_offsets":[0,4]}})";
const std::string kFourBytes("\0\0\x80?", 4);  // 1.0f

std::filesystem::path temp_dir(const char* tag) {
  std::string pattern = (std::filesystem::temp_directory_path() / tag).string() + "_XXXXXX";
  REQUIRE(::mkdtemp(pattern.data()) != nullptr);
  return pattern;
}

}  // namespace

TEST_CASE("safetensors: a minimal file, whitespace and padding as other writers emit",
          "[safetensors]") {
  const std::string header =
      "{\n  \"__metadata__\": {\"format\": \"pt\", \"caf\\u00e9\": \"\\u2713 \\ud83d\\ude00\"},\n"
      "  \"b\": {\"dtype\": \"F64\", \"shape\": [1], \"data_offsets\": [4, 12]},\n"
      "  \"a\": {\"shape\": [], \"data_offsets\": [0, 4], \"dtype\": \"F32\"}\n}      ";
  const std::string data = kFourBytes + std::string(8, '\0');
  const std::vector<uint8_t> file = make_file(header, data);  // the view points into it
  const SafetensorsView v = parse_safetensors(file, "f");
  REQUIRE(v.entries.size() == 2);
  CHECK(v.entries[0].name == "a");  // ordered by offset
  CHECK(v.entries[0].shape.empty());
  CHECK(v.entries[0].numel() == 1);
  CHECK(v.entries[1].name == "b");
  CHECK(v.entries[1].dtype == "F64");
  REQUIRE(v.find_metadata("format") != nullptr);
  CHECK(*v.find_metadata("format") == "pt");
  REQUIRE(v.find_metadata("caf\xc3\xa9") != nullptr);
  CHECK(*v.find_metadata("caf\xc3\xa9") == "\xe2\x9c\x93 \xf0\x9f\x98\x80");
  float one = 0;
  std::memcpy(&one, v.bytes(*v.find("a")).data(), 4);
  CHECK(one == 1.0f);
}

TEST_CASE("safetensors: empty tensors and an empty file body are valid", "[safetensors]") {
  CHECK(parse_safetensors(make_file("{}"), "f").entries.empty());
  const std::vector<uint8_t> file =
      make_file(R"({"e":{"dtype":"F32","shape":[0,3],"data_offsets":[0,0]}})");
  const SafetensorsView v = parse_safetensors(file, "f");
  REQUIRE(v.entries.size() == 1);
  CHECK(v.entries[0].numel() == 0);
}

TEST_CASE("safetensors: the file's framing is checked", "[safetensors]") {
  CHECK(parse_error({1, 2, 3}) ==
        "f.safetensors: not a safetensors file: 3 bytes, shorter than the "
        "8-byte header length");
  std::vector<uint8_t> huge(16, 0);
  huge[4] = 1;  // 2^32
  CHECK_THAT(parse_error(huge), Contains("exceeds the limit of 100000000 bytes"));
  std::vector<uint8_t> truncated = make_file(kOneF32, kFourBytes);
  truncated.resize(20);
  CHECK_THAT(parse_error(truncated), Contains("truncated safetensors file: the header claims 53 "
                                              "bytes but only 12 follow"));
  CHECK_THAT(parse_error(make_file(kOneF32, kFourBytes.substr(0, 3))),
             Contains("tensor \"x\" [] F32: data_offsets [0, 4] run past the end of the data (3 "
                      "bytes): the file is truncated"));
  CHECK_THAT(parse_error(make_file(kOneF32, kFourBytes + "!")),
             Contains("the tensors cover 4 bytes of data but 5 follow the header"));
}

TEST_CASE("safetensors: malformed JSON is rejected with its position", "[safetensors]") {
  struct Row {
    std::string header;
    std::string message;
  };
  const std::string kEmpty = R"({"dtype":"F32","shape":[0],"data_offsets":[0,0]})";
  const std::vector<Row> rows = {
      {"", "the header must be a JSON object starting with '{' (at byte 8)"},
      {"[]", "the header must be a JSON object"},
      {"{", "unexpected end of header, expected a string"},
      {"{\"x\"", "unexpected end of header, expected ':'"},
      {"{} x", "unexpected data after the header's closing '}'"},
      {"{}{}", "unexpected data after the header's closing '}'"},
      {"{\"a\":" + kEmpty + ", }", "expected a string"},
      {"{'a':1}", "expected a string (at byte 9)"},
      {"{\"a\nb\":1}", "unescaped control character in a string"},
      {"{\"a\\x\":1}", "invalid escape '\\x'"},
      {"{\"\\ud800\":1}", "unpaired surrogate in \\u escape"},
      {"{\"\\udc00\":1}", "unpaired surrogate in \\u escape"},
      {"{\"\\u12G4\":1}", "invalid hex digit in \\u escape"},
      {"{\"\\u12", "truncated \\u escape"},
      {"{\"\xff\":1}", "invalid UTF-8 in a string"},
      {"{\"\xc0\xaf\":1}", "invalid UTF-8 in a string"},          // overlong '/'
      {"{\"\xed\xa0\x80\":1}", "invalid UTF-8 in a string"},      // encoded surrogate
      {"{\"\xf4\x90\x80\x80\":1}", "invalid UTF-8 in a string"},  // above U+10FFFF
      {"{\"\xe2\x9c\":1}", "invalid UTF-8 in a string"},
      {"{\"abc", "unterminated string"},
      {"{\"x\":1}", "tensor \"x\": expected an object"},
      {"{\"x\":" + kEmpty + ",\"x\":" + kEmpty + "}", "duplicate key \"x\""},
      {"{\"x\":{\"dtype\":\"F32\",\"shape\":[]}}", "tensor \"x\": missing \"data_offsets\""},
      {"{\"x\":{\"dtype\":\"F32\",\"data_offsets\":[0,0]}}", "tensor \"x\": missing \"shape\""},
      {"{\"x\":{\"shape\":[],\"data_offsets\":[0,0]}}", "tensor \"x\": missing \"dtype\""},
      {"{\"x\":{\"dtype\":\"F32\",\"dtype\":\"F32\"}}", "tensor \"x\": duplicate field \"dtype\""},
      {"{\"x\":{\"dtype\":\"F32\",\"strides\":[1]}}", "tensor \"x\": unknown field \"strides\""},
      {"{\"x\":{\"dtype\":\"F31\"}}", "tensor \"x\": unknown dtype \"F31\""},
      {"{\"x\":{\"dtype\":32}}", "expected a string"},
      {"{\"x\":{\"shape\":[-1]}}", "expected a non-negative integer"},
      {"{\"x\":{\"shape\":[1.5]}}", "expected an integer"},
      {"{\"x\":{\"shape\":[1e3]}}", "expected an integer"},
      {"{\"x\":{\"shape\":[01]}}", "leading zeros are not allowed"},
      {"{\"x\":{\"shape\":[9223372036854775808]}}", "integer too large"},
      {"{\"x\":{\"shape\":[1,]}}", "expected an integer"},
      {"{\"x\":{\"shape\":[1 2]}}", "expected ','"},
      {"{\"x\":{\"shape\":true}}", "expected '['"},
      {"{\"x\":{\"data_offsets\":[0]}}", "tensor \"x\": data_offsets must be [begin, end]"},
      {"{\"__metadata__\":{\"a\":1}}", "__metadata__ value for \"a\" must be a string"},
      {"{\"__metadata__\":{\"a\":\"1\",\"a\":\"2\"}}", "duplicate __metadata__ key \"a\""},
      {"{\"__metadata__\":{},\"__metadata__\":{}}", "duplicate key \"__metadata__\""},
      {"{\"__metadata__\":[]}", "expected '{'"},
  };
  for (const Row& row : rows) {
    INFO("header: " << row.header);
    const std::string error = parse_error(make_file(row.header));
    CHECK_THAT(error, Contains("f.safetensors: invalid safetensors header: "));
    CHECK_THAT(error, Contains(row.message));
  }
}

TEST_CASE("safetensors: offsets must match the dtype and shape and tile the data",
          "[safetensors]") {
  auto entry = [](const std::string& name, const std::string& dtype, const std::string& shape,
                  int begin, int end) {
    return "\"" + name + "\":{\"dtype\":\"" + dtype + "\",\"shape\":" + shape +
           ",\"data_offsets\":[" + std::to_string(begin) + "," + std::to_string(end) + "]}";
  };
  const std::string data(16, '\0');
  CHECK_THAT(parse_error(make_file("{" + entry("a", "F32", "[2]", 0, 12) + "}", data)),
             Contains("tensor \"a\" [2] F32: data_offsets [0, 12] span 12 bytes, but the dtype "
                      "and shape need 8"));
  CHECK_THAT(parse_error(make_file("{" + entry("a", "F32", "[2]", 8, 0) + "}", data)),
             Contains("end before they begin"));
  CHECK_THAT(parse_error(make_file(
                 "{" + entry("a", "F32", "[2]", 0, 8) + "," + entry("b", "F32", "[2]", 4, 12) + "}",
                 std::string(12, '\0'))),
             Contains("tensor \"b\" starts at byte 4 of the data, expected 8 (tensors overlap)"));
  CHECK_THAT(parse_error(make_file(
                 "{" + entry("a", "F32", "[1]", 0, 4) + "," + entry("b", "F32", "[2]", 8, 16) + "}",
                 data)),
             Contains("tensor \"b\" starts at byte 8 of the data, expected 4 (a gap between "
                      "tensors)"));
  CHECK_THAT(parse_error(make_file("{" + entry("a", "F64", "[4294967296,4294967296]", 0, 0) + "}")),
             Contains("tensor \"a\" [4294967296, 4294967296] F64: its size overflows"));
  CHECK_THAT(
      parse_error(make_file("{" + entry("a", "U8", "[0,4294967296,4294967296]", 0, 0) + "}")),
      Contains("(no error)"));  // zero elements: no overflow, whatever the other dims
}

TEST_CASE("safetensors: the CRC in the metadata covers the whole file", "[safetensors]") {
  const std::string head = std::string(R"({"__metadata__":{")") + kCrcKey + R"(":")";
  const std::string tail = R"("},"x":{"dtype":"F32","shape":[],"data_offsets":[0,4]}})";
  // The CRC of the file with the digits zeroed, then written in.
  std::vector<uint8_t> file = make_file(head + "00000000" + tail, kFourBytes);
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", crc32(file));
  file = make_file(head + hex + tail, kFourBytes);
  CHECK(parse_safetensors(file, "f").crc_verified);
  CHECK_FALSE(parse_safetensors(make_file(kOneF32, kFourBytes), "f").crc_verified);
  for (size_t at : {size_t{2}, size_t{12}, file.size() - 3}) {  // length, header, data
    std::vector<uint8_t> damaged = file;
    damaged[at] ^= 0x01;
    INFO("byte " << at);
    CHECK_THAT(parse_error(damaged), Contains("f.safetensors: "));
  }
  std::vector<uint8_t> flipped_data = file;
  flipped_data.back() ^= 0x10;
  CHECK_THAT(parse_error(flipped_data), Contains("corrupted file: its CRC-32 is"));
  CHECK_THAT(parse_error(make_file(head + "ABCDEF01" + tail, kFourBytes)),
             Contains("tapegrad.crc32 must be 8 lowercase hex digits"));
  CHECK_THAT(parse_error(make_file(head + "\\u0030000000" + tail, kFourBytes)),
             Contains("tapegrad.crc32 must be 8 lowercase hex digits"));
}

TEST_CASE("safetensors: crc32 is zlib's", "[safetensors]") {
  // zlib.crc32(b"123456789") == 0xcbf43926 (the CRC-32 check value); and chaining.
  const std::string s = "123456789";
  const auto bytes = std::span(reinterpret_cast<const uint8_t*>(s.data()), s.size());
  CHECK(crc32(bytes) == 0xCBF43926U);
  CHECK(crc32(bytes.subspan(4), crc32(bytes.subspan(0, 4))) == 0xCBF43926U);
  std::vector<uint8_t> long_input(1000);
  for (size_t i = 0; i < long_input.size(); ++i) long_input[i] = static_cast<uint8_t>(i * 7);
  uint32_t bytewise = 0;
  for (uint8_t b : long_input) bytewise = crc32(std::span(&b, 1), bytewise);
  CHECK(crc32(long_input) == bytewise);
}

TEST_CASE("safetensors: the writer lays out aligned tensors the reader accepts", "[safetensors]") {
  const auto dir = temp_dir("tapegrad_st");
  const std::string path = (dir / "w.safetensors").string();
  const float f[3] = {1.5f, -2.0f, 0.25f};
  const double d[1] = {1.0 / 3.0};
  const uint8_t u[1] = {7};
  const std::vector<SafetensorsTensor> tensors = {
      {"f", "F32", {3}, {reinterpret_cast<const uint8_t*>(f), sizeof f}},
      {"u", "U8", {1, 1}, {u, 1}},
      {"d\"q\\", "F64", {}, {reinterpret_cast<const uint8_t*>(d), sizeof d}},
  };
  write_safetensors(path, {{"note", "line\nbreak"}}, tensors);
  const std::vector<uint8_t> file = read_whole_file(path);
  uint64_t header = 0;
  std::memcpy(&header, file.data(), 8);
  CHECK((8 + header) % 8 == 0);
  const SafetensorsView v = parse_safetensors(file, path);
  REQUIRE(v.entries.size() == 3);
  CHECK(v.entries[0].name == "d\"q\\");  // the 8-byte element first
  CHECK(v.entries[1].name == "f");
  CHECK(v.entries[2].name == "u");
  for (const SafetensorsEntry& e : v.entries) {
    CHECK(e.begin % static_cast<uint64_t>(safetensors_dtype_size(e.dtype)) == 0);
  }
  CHECK(*v.find_metadata("note") == "line\nbreak");
  CHECK(v.find_metadata(kCrcKey) != nullptr);
  CHECK(std::memcmp(v.bytes(*v.find("f")).data(), f, sizeof f) == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("safetensors: a failed write leaves the old file and no temporary", "[safetensors]") {
  const auto dir = temp_dir("tapegrad_st");
  const std::string path = (dir / "w.safetensors").string();
  const float f[1] = {1};
  const std::vector<SafetensorsTensor> ok = {
      {"f", "F32", {1}, {reinterpret_cast<const uint8_t*>(f), 4}}};
  write_safetensors(path, {}, ok);
  const std::vector<uint8_t> before = read_whole_file(path);
  const std::vector<SafetensorsTensor> bad_size = {
      {"f", "F32", {2}, {reinterpret_cast<const uint8_t*>(f), 4}}};
  CHECK_THROWS_WITH(write_safetensors(path, {}, bad_size),
                    Contains("tensor \"f\" [2] F32 needs 8 bytes, got 4"));
  const std::vector<SafetensorsTensor> twice = {ok[0], ok[0]};
  CHECK_THROWS_WITH(write_safetensors(path, {}, twice), Contains("\"f\" is used twice"));
  const std::vector<SafetensorsTensor> bad_utf8 = {
      {"\xff", "F32", {1}, {reinterpret_cast<const uint8_t*>(f), 4}}};
  CHECK_THROWS_WITH(write_safetensors(path, {}, bad_utf8), Contains("not valid UTF-8"));
  CHECK_THROWS_WITH(write_safetensors(path, {{kCrcKey, "0"}}, ok), Contains("is reserved"));
  CHECK_THROWS_WITH(write_safetensors((dir / "missing" / "w.safetensors").string(), {}, ok),
                    Contains("No such file or directory"));
  CHECK(read_whole_file(path) == before);
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    (void)entry;
    ++files;
  }
  CHECK(files == 1);
  CHECK_THROWS_WITH(read_whole_file((dir / "nope").string()), Contains("cannot open"));
  std::filesystem::remove_all(dir);
}
