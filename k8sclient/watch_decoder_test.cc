#include "k8sclient/watch_decoder.h"

#include <gtest/gtest.h>

#include "k8sclient/api_error.h"

namespace draco::k8s {
namespace {

const std::string kStream =
    R"({"type":"ADDED","object":{"kind":"ConfigMap","metadata":{"name":"a","namespace":"ns",)"
    R"("resourceVersion":"10","uid":"u1","labels":{"app":"x"}},"data":{"k":"h\u00e9llo ü"}}})"
    "\n"
    R"({"type":"MODIFIED","object":{"metadata":{"name":"a","namespace":"ns","resourceVersion":"11"}}})"
    "\n"
    R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"12",)"
    R"("annotations":{"k8s.io/initial-events-end":"true"}}}})"
    "\n"
    R"({"type":"DELETED","object":{"metadata":{"name":"a","namespace":"ns","resourceVersion":"13"}}})"
    "\n"
    R"({"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired","message":"too old"}})"
    "\n";

void CheckEvents(const std::deque<WatchEvent>& evs) {
  ASSERT_EQ(evs.size(), 5u);
  EXPECT_EQ(evs[0].type, WatchEvent::Type::kAdded);
  EXPECT_EQ(evs[0].object->Key(), "ns/a");
  EXPECT_EQ(evs[0].object->uid(), "u1");
  EXPECT_EQ(evs[0].object->labels().at("app"), "x");
  EXPECT_EQ(evs[1].type, WatchEvent::Type::kModified);
  EXPECT_EQ(evs[1].object->resource_version(), "11");
  EXPECT_EQ(evs[2].type, WatchEvent::Type::kBookmark);
  EXPECT_EQ(evs[2].object->annotations().at("k8s.io/initial-events-end"), "true");
  EXPECT_EQ(evs[3].type, WatchEvent::Type::kDeleted);
  EXPECT_EQ(evs[4].type, WatchEvent::Type::kError);
  EXPECT_TRUE(IsGone(evs[4].error)) << evs[4].error;
}

TEST(WatchDecoderTest, WholeStreamAtOnce) {
  WatchDecoder d;
  std::deque<WatchEvent> evs;
  ASSERT_TRUE(d.Feed(kStream, evs).ok());
  ASSERT_TRUE(d.Finish(evs).ok());
  CheckEvents(evs);
}

// Every possible split point, including inside multi-byte UTF-8 sequences and right before '\n'.
TEST(WatchDecoderTest, EverySplitPointYieldsTheSameEvents) {
  for (size_t cut = 0; cut <= kStream.size(); ++cut) {
    WatchDecoder d;
    std::deque<WatchEvent> evs;
    ASSERT_TRUE(d.Feed(std::string_view(kStream).substr(0, cut), evs).ok()) << cut;
    ASSERT_TRUE(d.Feed(std::string_view(kStream).substr(cut), evs).ok()) << cut;
    ASSERT_TRUE(d.Finish(evs).ok());
    SCOPED_TRACE(cut);
    CheckEvents(evs);
  }
}

TEST(WatchDecoderTest, ByteAtATime) {
  WatchDecoder d;
  std::deque<WatchEvent> evs;
  for (char c : kStream) ASSERT_TRUE(d.Feed(std::string_view(&c, 1), evs).ok());
  EXPECT_EQ(d.pending_bytes(), 0u);
  CheckEvents(evs);
}

TEST(WatchDecoderTest, FinalLineWithoutNewlineIsDecodedAtFinish) {
  WatchDecoder d;
  std::deque<WatchEvent> evs;
  ASSERT_TRUE(d.Feed(R"({"type":"ADDED","object":{"metadata":{"name":"a"}}})", evs).ok());
  EXPECT_TRUE(evs.empty());
  ASSERT_TRUE(d.Finish(evs).ok());
  ASSERT_EQ(evs.size(), 1u);
}

TEST(WatchDecoderTest, TruncatedStreamIsAnError) {
  WatchDecoder d;
  std::deque<WatchEvent> evs;
  ASSERT_TRUE(d.Feed(R"({"type":"ADDED","object":{"metadata":)", evs).ok());
  Status s = d.Finish(evs);
  EXPECT_EQ(s.code(), StatusCode::kDataLoss);
}

TEST(WatchDecoderTest, GarbageAndUnknownTypesAreErrors) {
  EXPECT_FALSE(WatchDecoder::DecodeLine("not json").ok());
  EXPECT_FALSE(WatchDecoder::DecodeLine(R"({"type":"WHAT","object":{}})").ok());
  EXPECT_FALSE(WatchDecoder::DecodeLine(R"({"type":"ADDED"})").ok());
  EXPECT_FALSE(WatchDecoder::DecodeLine(R"([1,2])").ok());
}

TEST(WatchDecoderTest, BlankLinesAndCrlfAreTolerated) {
  WatchDecoder d;
  std::deque<WatchEvent> evs;
  ASSERT_TRUE(d.Feed("\n\r\n"
                     R"({"type":"ADDED","object":{"metadata":{"name":"a"}}})"
                     "\r\n",
                     evs)
                  .ok());
  EXPECT_EQ(evs.size(), 1u);
}

}  // namespace
}  // namespace draco::k8s
