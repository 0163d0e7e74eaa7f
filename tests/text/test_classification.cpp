// Chapter 6's classification data: pandas' draws for the book's balancing and split (goldens from
// numpy), the tab-separated reader and its errors, SpamDataset's padding, the KJV Testament task.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <tapegrad/graph/error.h>
#include <tapegrad/text/classification.h>
#include <tapegrad/text/kjv.h>
#include <tapegrad/text/tokenizer.h>
#include "tests/goldens.h"
#include "tests/text/kjv_sample.h"

using namespace tapegrad;
using tapegrad::testing::GoldenFile;

using tapegrad::testing::kjv_sample;

TEST_CASE("numpy_permutation: RandomState(seed).choice(n, k, replace=False), bit-exact",
          "[text][classification]") {
  const GoldenFile golden("finetune_data", "permutation_goldens.txt");
  for (int64_t n : {1, 2, 10, 1494}) {
    INFO("n " << n);
    CHECK(numpy_permutation(n, 123) == golden["perm_" + std::to_string(n)].ints());
  }
  CHECK(numpy_permutation(1494, 7) == golden["perm_1494_seed7"].ints());
  const std::vector<int64_t> perm = numpy_permutation(4825, 123);
  CHECK(std::vector<int64_t>(perm.begin(), perm.begin() + 747) == golden["choice_4825_747"].ints());
  CHECK(numpy_permutation(0, 123).empty());
}

TEST_CASE("create_balanced_dataset and random_split: the book's rows, in pandas' order",
          "[text][classification]") {
  const GoldenFile golden("finetune_data", "permutation_goldens.txt");
  // The SMS collection's counts as pandas reads it: 4825 ham, 747 spam, interleaved.
  std::vector<LabeledText> rows;
  for (int64_t i = 0; i < 4825 + 747; ++i) {
    rows.push_back({i % 7 == 3 && i / 7 < 747 ? 1 : 0, std::to_string(i)});
  }
  std::vector<const LabeledText*> ham, spam;
  for (const LabeledText& r : rows) (r.label == 0 ? ham : spam).push_back(&r);
  REQUIRE(ham.size() == 4825);
  REQUIRE(spam.size() == 747);

  const std::vector<LabeledText> balanced = create_balanced_dataset(rows, 2);
  REQUIRE(balanced.size() == 1494);
  const std::vector<int64_t> choice = golden["choice_4825_747"].ints();
  for (size_t i = 0; i < 747; ++i) {  // ham.sample(747, random_state=123), then spam in order
    REQUIRE(balanced[i].text == ham[static_cast<size_t>(choice[i])]->text);
    REQUIRE(balanced[747 + i].text == spam[i]->text);
  }

  const LabeledSplit split = random_split(balanced, 0.7, 0.1);
  CHECK(split.train.size() == 1045);  // the book's 1045 / 149 / 300
  CHECK(split.validation.size() == 149);
  CHECK(split.test.size() == 300);
  const std::vector<int64_t> perm = golden["perm_1494"].ints();
  CHECK(split.train[0].text == balanced[static_cast<size_t>(perm[0])].text);
  CHECK(split.validation[0].text == balanced[static_cast<size_t>(perm[1045])].text);
  CHECK(split.test.back().text == balanced[static_cast<size_t>(perm[1493])].text);

  CHECK_THROWS_WITH(create_balanced_dataset(rows, 2, 800), Catch::Contains("class 1 has 747 rows"));
  CHECK_THROWS_WITH(random_split(balanced, 0.8, 0.3), Catch::Contains("random_split"));
}

TEST_CASE("parse_labeled_tsv: pandas' reading of the SMS layout", "[text][classification]") {
  const std::string tsv =
      "ham\tGo until jurong point, crazy..\n"
      "\n"
      "spam\t\"Free entry\" in 2 a wkly comp\n"  // quoted field, text after the quote kept
      "ham\tHe said \"ok\" and left\r\n"         // a quote inside a field is text
      "spam\t\"two\nlines, \"\"quoted\"\"\"\n";  // a quoted newline and doubled quotes
  const std::vector<LabeledText> rows = parse_labeled_tsv(tsv, spam_classes());
  REQUIRE(rows.size() == 4);
  CHECK(rows[0].label == 0);
  CHECK(rows[0].text == "Go until jurong point, crazy..");
  CHECK(rows[1].label == 1);
  CHECK(rows[1].text == "Free entry in 2 a wkly comp");
  CHECK(rows[2].text == "He said \"ok\" and left");
  CHECK(rows[3].text == "two\nlines, \"quoted\"");

  // What labeled_tsv writes reads back as it was.
  const std::vector<LabeledText> odd{{1, "\"starts with a quote"}, {0, "a\ttab"}, {0, "plain"}};
  const std::vector<LabeledText> back =
      parse_labeled_tsv(labeled_tsv(odd, spam_classes()), spam_classes());
  REQUIRE(back.size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    CHECK(back[i].label == odd[i].label);
    CHECK(back[i].text == odd[i].text);
  }
  CHECK_THROWS_WITH(labeled_tsv(std::vector<LabeledText>{{2, "x"}}, spam_classes()),
                    Catch::Contains("label 2"));
}

TEST_CASE("parse_labeled_tsv: errors name line and column", "[text][classification]") {
  CHECK_THROWS_WITH(parse_labeled_tsv("ham\tok\nspam no tab here\n", spam_classes()),
                    Catch::Contains("line 2, column 1") && Catch::Contains("no tab"));
  CHECK_THROWS_WITH(parse_labeled_tsv("ham\tok\n\nham\ta\tb\n", spam_classes()),
                    Catch::Contains("line 3, column 6") && Catch::Contains("saw 3"));
  CHECK_THROWS_WITH(parse_labeled_tsv("ham\tok\neggs\tno\n", spam_classes()),
                    Catch::Contains("line 2, column 1") && Catch::Contains("label 'eggs'") &&
                        Catch::Contains("'ham', 'spam'"));
  CHECK_THROWS_WITH(parse_labeled_tsv("ham\tok\nspam\t\"never closed\nham\tx\n", spam_classes()),
                    Catch::Contains("line 2, column 6") && Catch::Contains("never closed"));
  CHECK_THROWS_WITH(read_labeled_tsv("/nonexistent/SMSSpamCollection.tsv", spam_classes()),
                    Catch::Contains("cannot read"));
  CHECK(parse_labeled_tsv("", spam_classes()).empty());
}

TEST_CASE("SpamDataset: padded to the longest text or cut to max_length",
          "[text][classification]") {
  ByteTokenizer bytes;
  const std::vector<LabeledText> rows{{0, "abc"}, {1, "a"}, {1, "abcdef"}};
  const SpamDataset longest(rows, bytes);
  CHECK(longest.max_length() == 6);
  CHECK(std::vector<int64_t>(longest.encoded(1).begin(), longest.encoded(1).end()) ==
        std::vector<int64_t>{'a', 50256, 50256, 50256, 50256, 50256});
  const SpamDataset cut(rows, bytes, 2);
  CHECK(std::vector<int64_t>(cut.encoded(2).begin(), cut.encoded(2).end()) ==
        std::vector<int64_t>{'a', 'b'});
  CHECK(cut.label(2) == 1);
  CHECK_THROWS_WITH(cut.encoded(3), Catch::Contains("index 3"));
  CHECK_THROWS_WITH(SpamDataset(rows, bytes, 0), Catch::Contains("max_length"));

  ClassificationDataLoader loader(longest, 2, false, false);
  Ids inputs, targets;
  REQUIRE(loader.next(inputs, targets));
  CHECK(inputs.shape() == Shape{2, 6});
  CHECK(targets.shape() == Shape{2});
  CHECK(targets[0] == 0);
  CHECK(targets[1] == 1);
  REQUIRE(loader.next(inputs, targets));
  CHECK(inputs.shape() == Shape{1, 6});
  CHECK_FALSE(loader.next(inputs, targets));
}

TEST_CASE("KJV: verses and the Testament task from Debian's bible-kjv text",
          "[text][classification]") {
  const std::string text = kjv_sample();
  const std::vector<KjvVerse> verses = parse_kjv_verses(text);
  REQUIRE(verses.size() == 39);
  CHECK(verses[0].book == "Genesis");
  CHECK(verses[0].text == "In the beginning God created the heaven and the earth.");
  CHECK(verses[1].text ==
        "And the earth was without form, and void; and darkness was upon the face of the deep. "
        "And the Spirit of God moved upon the face of the waters.");
  int64_t old_count = 0;
  for (const KjvVerse& v : verses) {
    old_count += !v.new_testament;
    if (v.book == "John" && v.verse == 35) CHECK(v.text == "Jesus wept.");
  }
  CHECK(old_count == 18);
  CHECK(verses.back().book == "Revelation");
  CHECK(verses.back().chapter == 22);

  const std::vector<LabeledText> rows = kjv_testament_dataset(text, 10);
  REQUIRE(rows.size() == 20);
  for (size_t i = 0; i < rows.size(); ++i) CHECK(rows[i].label == (i < 10 ? 0 : 1));
  const std::vector<LabeledText> back =
      parse_labeled_tsv(labeled_tsv(rows, testament_classes()), testament_classes());
  REQUIRE(back.size() == 20);
  CHECK(back[13].text == rows[13].text);

  CHECK_THROWS_WITH(parse_kjv_verses("  1 In the beginning\n"), Catch::Contains("line 1"));
  CHECK_THROWS_WITH(parse_kjv_verses("\nGenesis\n"), Catch::Contains("line 2"));
  CHECK_THROWS_WITH(kjv_testament_dataset(""), Catch::Contains("no verse"));
}
