// http_wire.h: base URLs, request bytes and the incremental response parser.
#include "k8sclient/http_wire.h"

#include <string>

#include <gtest/gtest.h>

namespace draco::k8s {
namespace {

TEST(BaseUrlTest, SplitsSchemeHostPortAndPrefix) {
  auto u = ParseBaseUrl("https://127.0.0.1:6443");
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_TRUE(u->tls);
  EXPECT_EQ(u->host, "127.0.0.1");
  EXPECT_EQ(u->port, "6443");
  EXPECT_EQ(u->path_prefix, "");
  EXPECT_EQ(u->HostHeader(), "127.0.0.1:6443");
  EXPECT_TRUE(u->HostIsIpLiteral());

  u = ParseBaseUrl("https://api.example.com/k8s/clusters/c-1/");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->port, "443");
  EXPECT_EQ(u->path_prefix, "/k8s/clusters/c-1");
  EXPECT_EQ(u->HostHeader(), "api.example.com");
  EXPECT_FALSE(u->HostIsIpLiteral());

  u = ParseBaseUrl("http://[::1]:8080");
  ASSERT_TRUE(u.ok());
  EXPECT_FALSE(u->tls);
  EXPECT_EQ(u->host, "::1");
  EXPECT_EQ(u->HostHeader(), "[::1]:8080");
  EXPECT_TRUE(u->HostIsIpLiteral());
  EXPECT_EQ(ParseBaseUrl("http://localhost")->port, "80");
}

TEST(BaseUrlTest, RefusesWhatItCannotDial) {
  for (const char* bad : {"ftp://host", "host:6443", "https://", "https://user@host",
                          "https://host/?q=1", "https://host:0", "https://host:99999",
                          "https://host:x", "https://[::1", "https://[::1]x", "https://:443"}) {
    auto u = ParseBaseUrl(bad);
    EXPECT_FALSE(u.ok()) << bad;
    if (!u.ok()) {
      EXPECT_EQ(u.status().code(), StatusCode::kInvalidArgument) << bad;
    }
  }
}

TEST(SerializeRequestTest, HeadHeadersLengthAndBody) {
  EXPECT_EQ(SerializeRequest("GET", "/api/v1/pods?limit=1", "h:1", {{"Accept", "a/b"}}, ""),
            "GET /api/v1/pods?limit=1 HTTP/1.1\r\nHost: h:1\r\nAccept: a/b\r\n\r\n");
  EXPECT_EQ(SerializeRequest("POST", "/x", "h", {}, "{}"),
            "POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\n{}");
  EXPECT_EQ(SerializeRequest("PUT", "/x", "h", {}, ""),
            "PUT /x HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n");
  EXPECT_EQ(SerializeRequest("DELETE", "/x", "h", {{"G", "a"}, {"G", "b"}}, "{}"),
            "DELETE /x HTTP/1.1\r\nHost: h\r\nG: a\r\nG: b\r\nContent-Length: 2\r\n\r\n{}");
}

// Feeds `bytes` one at a time.
Status FeedBytes(ResponseParser& p, const std::string& bytes) {
  for (char c : bytes) {
    Status st = p.Feed(std::string_view(&c, 1));
    if (!st.ok()) return st;
  }
  return OkStatus();
}

TEST(ResponseParserTest, ContentLengthByteByByte) {
  ResponseParser p;
  EXPECT_TRUE(p.empty());
  ASSERT_TRUE(FeedBytes(p,
                        "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\n"
                        "Retry-After:  3 \r\nContent-Length: 7\r\n\r\n{\"a\":1}")
                  .ok());
  ASSERT_TRUE(p.done());
  EXPECT_FALSE(p.empty());
  EXPECT_EQ(p.response().code, 201);
  EXPECT_EQ(p.response().body, "{\"a\":1}");
  EXPECT_TRUE(p.response().keep_alive);
  ASSERT_NE(p.response().Header("retry-after"), nullptr);
  EXPECT_EQ(*p.response().Header("retry-after"), "3");
  EXPECT_EQ(p.response().Header("x-missing"), nullptr);
}

TEST(ResponseParserTest, ChunkedWithExtensionsAndTrailers) {
  const std::string msg =
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
      "4;ext=1\r\nabcd\r\nA\r\n0123456789\r\n0\r\nX-Trailer: t\r\n\r\n";
  ResponseParser whole;
  ASSERT_TRUE(whole.Feed(msg).ok());
  ASSERT_TRUE(whole.done());
  EXPECT_EQ(whole.response().body, "abcd0123456789");
  ResponseParser bytes;
  ASSERT_TRUE(FeedBytes(bytes, msg).ok());
  ASSERT_TRUE(bytes.done());
  EXPECT_EQ(bytes.response().body, "abcd0123456789");
}

TEST(ResponseParserTest, InterimResponsesAndBodilessCodes) {
  ResponseParser p;
  ASSERT_TRUE(p.Feed("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n").ok());
  ASSERT_TRUE(p.done());
  EXPECT_EQ(p.response().code, 204);
  EXPECT_EQ(p.response().body, "");
}

TEST(ResponseParserTest, BodyUntilCloseAndCutShortBodies) {
  ResponseParser p;
  ASSERT_TRUE(p.Feed("HTTP/1.1 200 OK\r\n\r\nsome").ok());
  ASSERT_TRUE(p.Feed(" bytes").ok());
  EXPECT_FALSE(p.done());
  ASSERT_TRUE(p.Eof().ok());
  ASSERT_TRUE(p.done());
  EXPECT_EQ(p.response().body, "some bytes");
  EXPECT_FALSE(p.response().keep_alive);

  ResponseParser cut;
  ASSERT_TRUE(cut.Feed("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc").ok());
  EXPECT_EQ(cut.Eof().code(), StatusCode::kUnavailable);
  ResponseParser none;
  EXPECT_EQ(none.Eof().code(), StatusCode::kUnavailable);
  EXPECT_TRUE(none.empty());
}

TEST(ResponseParserTest, ConnectionReuse) {
  auto keep = [](const std::string& head) {
    ResponseParser p;
    EXPECT_TRUE(p.Feed(head + "Content-Length: 0\r\n\r\n").ok());
    return p.response().keep_alive;
  };
  EXPECT_TRUE(keep("HTTP/1.1 200 OK\r\n"));
  EXPECT_FALSE(keep("HTTP/1.1 200 OK\r\nConnection: close\r\n"));
  EXPECT_FALSE(keep("HTTP/1.0 200 OK\r\n"));
  EXPECT_TRUE(keep("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\n"));
}

TEST(ResponseParserTest, MalformedAndOversizedInputIsAnError) {
  for (const char* bad :
       {"HTTP/2 200 OK\r\n\r\n", "HTTP/1.1 2x0 OK\r\n\r\n", "HTTP/1.1 200OK\r\n\r\n",
        "HTTP/1.1 200 OK\r\nno colon\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\naXY",
        "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nab"}) {
    ResponseParser p;
    EXPECT_FALSE(p.Feed(bad).ok()) << bad;
  }
  ResponseParser head(16);
  EXPECT_FALSE(head.Feed("HTTP/1.1 200 OK\r\nX-Long: 0123456789\r\n\r\n").ok());
  ResponseParser body(1024, 4);
  EXPECT_FALSE(body.Feed("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n").ok());
  ResponseParser chunks(1024, 4);
  EXPECT_FALSE(
      chunks.Feed("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\n").ok());
  ResponseParser close(1024, 4);
  EXPECT_FALSE(close.Feed("HTTP/1.1 200 OK\r\n\r\nabcde").ok());
}

}  // namespace
}  // namespace draco::k8s
