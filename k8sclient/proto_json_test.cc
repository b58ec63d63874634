// Protobuf -> JSON transcoding (proto_json.h) on hand-encoded messages; the generated schema
// against a real API server is controller/run/proto_schema_integration_test.cc.
#include "k8sclient/proto_json.h"

#include <deque>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "k8sclient/api_error.h"
#include "k8sclient/watch_decoder.h"

namespace draco::k8s {
namespace {

// A tiny protobuf writer for the tests.
std::string Varint(uint64_t v) {
  std::string out;
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
  return out;
}
std::string Tag(uint32_t field, uint32_t wire) { return Varint((uint64_t{field} << 3) | wire); }
std::string Bytes(uint32_t field, std::string_view data) {
  return Tag(field, 2) + Varint(data.size()) + std::string(data);
}
std::string Int(uint32_t field, int64_t v) {
  return Tag(field, 0) + Varint(static_cast<uint64_t>(v));
}
std::string Envelope(std::string_view api_version, std::string_view kind, std::string_view raw) {
  return std::string("k8s\0", 4) + Bytes(1, Bytes(1, api_version) + Bytes(2, kind)) +
         Bytes(2, raw) + Bytes(3, "") + Bytes(4, "");
}
std::string Frame(std::string_view event) {
  std::string out(4, '\0');
  out[0] = static_cast<char>((event.size() >> 24) & 0xff);
  out[1] = static_cast<char>((event.size() >> 16) & 0xff);
  out[2] = static_cast<char>((event.size() >> 8) & 0xff);
  out[3] = static_cast<char>(event.size() & 0xff);
  return out + std::string(event);
}

constexpr std::string_view kSchema = R"(
# test schema
K v1 Widget t.Widget
K v1 Status t.Status
K v1 Tree t.Tree
K v1 WidgetList t.WidgetList
M t.ListMeta 2,resourceVersion,s,o 3,continue,s,o 4,remainingItemCount,i,op
M t.WidgetList 1,metadata,m:t.ListMeta,o 2,items,m:t.Widget,r
M t.Tree 1,child,m:t.Tree,op
M t.Meta 1,name,s,o 3,namespace,s,o 6,resourceVersion,s,o 7,gen,i,o 8,created,t,oz 9,deleted,t,op 11,labels,map:s,o 17,managedFields,m:t.Managed,or
M t.Managed 1,manager,s,o 7,fieldsV1,raw,op
M t.Source 1,path,s,o 2,size,q,op
M t.Widget 1,metadata,m:t.Meta,o 2,,m:t.Source,n 3,count,i, 4,ratio,i,op 5,on,b,o 6,tags,s,or 7,ids,i,or 8,port,ios, 9,params,raw, 10,blob,y,o 11,renew,mt,op 12,parts,m:t.Part,or 13,caps,map:m:t.Part,o 14,template,m:t.Meta,op
M t.Part 1,name,s, 2,n,i,o 3,list,s,r
M t.Status 3,status,s,o 4,message,s,o 5,reason,s,o 6,code,i,o
)";

std::shared_ptr<const ProtoSchema> Schema() {
  auto s = ProtoSchema::Parse(kSchema);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : nullptr;
}

void ExpectJson(std::string_view got, std::string_view want) {
  rapidjson::Document g, w;
  g.Parse(got.data(), got.size());
  w.Parse(want.data(), want.size());
  ASSERT_FALSE(g.HasParseError()) << got;
  ASSERT_FALSE(w.HasParseError()) << want;
  EXPECT_EQ(g, w) << "got  " << got << "\nwant " << want;
}

std::string RichWidget() {
  // ObjectMeta's field numbers (the Object's metadata are read from them).
  std::string meta = Bytes(1, "w") + Bytes(3, "ns") + Bytes(6, "42") + Int(7, 0) +
                     Bytes(8, Int(1, 1700000000) + Int(2, 999)) + Bytes(9, "") +
                     Bytes(11, Bytes(1, "a") + Bytes(2, "b")) +
                     Bytes(11, Bytes(1, "c") + Bytes(2, ""));
  std::string source = Bytes(1, "/x") + Bytes(2, Bytes(1, "1500m"));
  return Bytes(1, meta) + Bytes(2, source) + Int(3, 0) + Int(4, 0) + Int(5, 0) + Bytes(6, "x") +
         Bytes(6, "y") + Bytes(7, Varint(1) + Varint(static_cast<uint64_t>(-2)) + Varint(300)) +
         Bytes(8, Int(1, 1) + Int(2, 0) + Bytes(3, "http")) +
         Bytes(9, Bytes(1, R"({"k":[1,"two",null]})")) + Bytes(10, std::string("\x00\x01\xff", 3)) +
         Bytes(11, Int(1, 1700000000) + Int(2, 123456789)) + Bytes(12, Bytes(1, "p0") + Int(2, 0)) +
         Bytes(12, Bytes(1, "p1") + Int(2, 7)) +
         Bytes(13, Bytes(1, "m") + Bytes(2, Bytes(1, "q") + Int(2, 2)));
}

TEST(ProtoJsonTest, TranscodesEveryJsonRule) {
  auto schema = Schema();
  auto json = ProtoObjectToJson(*schema, Envelope("v1", "Widget", RichWidget()));
  ASSERT_TRUE(json.ok()) << json.status();
  // omitempty drops the zero gen and on; count (no omitempty) and the pointer ratio stay; the
  // zero deleted pointer time is null; the inline source's fields are the widget's; nanoseconds
  // are dropped by Time and truncated to microseconds by MicroTime; packed ints are signed; an
  // absent list without omitempty is null, as encoding/json writes a nil slice.
  ExpectJson(*json, R"({"kind":"Widget","apiVersion":"v1",
    "metadata":{"name":"w","namespace":"ns","resourceVersion":"42","labels":{"a":"b","c":""},
                "created":"2023-11-14T22:13:20Z","deleted":null},
    "path":"/x","size":"1500m","count":0,"ratio":0,"tags":["x","y"],"ids":[1,-2,300],
    "port":"http","params":{"k":[1,"two",null]},"blob":"AAH/",
    "renew":"2023-11-14T22:13:20.123456Z",
    "parts":[{"name":"p0","list":null},{"name":"p1","n":7,"list":null}],
    "caps":{"m":{"name":"q","n":2,"list":null}}})");
}

// Options::drop_managed_fields: the top-level object's managedFields go, nothing else does (a
// nested ObjectMeta keeps them; lists and watch events drop them too).
TEST(ProtoJsonTest, DropsTheTopLevelManagedFieldsOnly) {
  std::string managed = Bytes(17, Bytes(1, "kubectl") + Bytes(7, Bytes(1, R"({"f:spec":{}})")));
  std::string w = Bytes(1, Bytes(1, "m") + managed + Bytes(6, "7")) + Int(3, 1) +
                  Bytes(9, Bytes(1, "{}")) + Bytes(14, Bytes(1, "t") + managed);
  auto keep = Schema();
  auto kept = ProtoObjectToJson(*keep, Envelope("v1", "Widget", w));
  ASSERT_TRUE(kept.ok()) << kept.status();
  ExpectJson(*kept, R"({"kind":"Widget","apiVersion":"v1",
      "metadata":{"name":"m","resourceVersion":"7",
                  "managedFields":[{"manager":"kubectl","fieldsV1":{"f:spec":{}}}]},
      "count":1,"params":{},
      "template":{"name":"t","managedFields":[{"manager":"kubectl","fieldsV1":{"f:spec":{}}}]}})");

  ProtoSchema::Options o;
  o.drop_managed_fields = true;
  auto drop = ProtoSchema::Parse(kSchema, o);
  ASSERT_TRUE(drop.ok()) << drop.status();
  const std::string want = R"({"kind":"Widget","apiVersion":"v1",
      "metadata":{"name":"m","resourceVersion":"7"},"count":1,"params":{},
      "template":{"name":"t","managedFields":[{"manager":"kubectl","fieldsV1":{"f:spec":{}}}]}})";
  auto json = ProtoObjectToJson(**drop, Envelope("v1", "Widget", w));
  ASSERT_TRUE(json.ok()) << json.status();
  ExpectJson(*json, want);
  auto obj = ProtoObjectToObject(**drop, Envelope("v1", "Widget", w));
  ASSERT_TRUE(obj.ok()) << obj.status();
  ExpectJson((*obj)->json(), want);
  EXPECT_EQ((*obj)->resource_version(), "7");
  auto list = ProtoListToObjects(**drop, Envelope("v1", "WidgetList", Bytes(2, w)));
  ASSERT_TRUE(list.ok()) << list.status();
  ASSERT_EQ(list->items.size(), 1u);
  EXPECT_EQ(list->items[0]->json().find(R"("metadata":{"name":"m","resourceVersion":"7"})"),
            list->items[0]->json().find(R"("metadata")"));
  auto ev = DecodeProtoWatchEvent(
      **drop, Bytes(1, "MODIFIED") + Bytes(2, Bytes(1, Envelope("v1", "Widget", w))));
  ASSERT_TRUE(ev.ok()) << ev.status();
  ExpectJson(ev->object->json(), want);
}

TEST(ProtoJsonTest, ZeroTimesAndIntPorts) {
  auto schema = Schema();
  // created is omitzero: a zero time is left out; an int-or-string holding an int is a number.
  std::string w =
      Bytes(1, Bytes(1, "z") + Bytes(8, "")) + Int(3, 5) + Bytes(8, Int(2, 8080)) + Bytes(9, "");
  auto json = ProtoObjectToJson(*schema, Envelope("v1", "Widget", w));
  ASSERT_TRUE(json.ok()) << json.status();
  ExpectJson(*json,
             R"({"kind":"Widget","apiVersion":"v1","metadata":{"name":"z"},"count":5,"port":8080,
                 "params":null})");
}

TEST(ProtoJsonTest, WhatTheSchemaDoesNotCoverIsAnError) {
  auto schema = Schema();
  auto transcode = [&](std::string_view kind, const std::string& body) {
    return ProtoObjectToJson(*schema, Envelope("v1", kind, body)).status();
  };
  EXPECT_FALSE(transcode("Widget", Int(99, 1)).ok());  // a field of a newer server
  EXPECT_FALSE(transcode("Widget", Int(6, 1)).ok());   // varint where a string belongs
  EXPECT_FALSE(transcode("Gadget", "").ok());          // a kind not in the schema
  EXPECT_FALSE(transcode("Widget", Bytes(3, "x").substr(0, 2)).ok());  // truncated
  EXPECT_FALSE(transcode("Widget", Bytes(9, Bytes(1, "{bad"))).ok());  // raw that is not JSON
  EXPECT_FALSE(transcode("Widget", Bytes(9, Bytes(1, Envelope("v1", "Widget", "")))).ok());
  EXPECT_FALSE(ProtoObjectToJson(*schema, "{\"kind\":\"Widget\"}").ok());  // no envelope
  EXPECT_FALSE(transcode("Widget", Tag(1, 3)).ok());                       // groups
  // Deep nesting is refused, not recursed into without bound.
  std::string nested;
  for (int i = 0; i < 10; ++i) nested = Bytes(1, nested);
  EXPECT_TRUE(transcode("Tree", nested).ok());
  for (int i = 0; i < 100; ++i) nested = Bytes(1, nested);
  EXPECT_FALSE(transcode("Tree", nested).ok());
}

TEST(ProtoJsonTest, ListsBecomeObjectsWithTheirMetadata) {
  auto schema = Schema();
  std::string list_meta = Bytes(2, "77") + Bytes(3, "next") + Int(4, 5);
  std::string item = Bytes(1, Bytes(1, "i") + Bytes(9, Int(1, 1700000000))) + Int(3, 1);
  auto list = ProtoListToObjects(
      *schema, Envelope("v1", "WidgetList", Bytes(1, list_meta) + Bytes(2, item) + Bytes(2, item)));
  ASSERT_TRUE(list.ok()) << list.status();
  EXPECT_EQ(list->resource_version, "77");
  EXPECT_EQ(list->continue_token, "next");
  EXPECT_EQ(list->remaining_item_count, 5);
  ASSERT_EQ(list->items.size(), 2u);
  EXPECT_EQ(list->items[0]->name(), "i");
  EXPECT_TRUE(list->items[0]->has_deletion_timestamp());
  EXPECT_EQ(list->items[0]->kind(), "");  // list items carry no kind, as in the server's JSON
  ExpectJson(list->items[1]->json(),
             R"({"metadata":{"name":"i","deleted":"2023-11-14T22:13:20Z"},"count":1})");
  // An object kind is not a list; a list with a field the schema lacks is refused.
  EXPECT_FALSE(ProtoListToObjects(*schema, Envelope("v1", "Widget", "")).ok());
  EXPECT_FALSE(ProtoListToObjects(*schema, Envelope("v1", "WidgetList", Int(9, 1))).ok());
}

TEST(ProtoJsonTest, ServesGroupVersionsOfItsKinds) {
  auto schema = Schema();
  EXPECT_TRUE(schema->ServesGroupVersion("v1"));
  EXPECT_FALSE(schema->ServesGroupVersion("v"));
  EXPECT_FALSE(schema->ServesGroupVersion("draco.dev/v1alpha1"));
  EXPECT_NE(schema->FindKind("any.group/v9", "Status"), nullptr);
  ProtoNegotiator n(schema);
  EXPECT_TRUE(n.Wants("v1"));
  n.Refuse("v1", Status(StatusCode::kDataLoss, "test"));
  EXPECT_FALSE(n.Wants("v1"));
  EXPECT_FALSE(ProtoNegotiator(nullptr).Wants("v1"));
}

TEST(ProtoJsonTest, SchemaErrors) {
  EXPECT_FALSE(ProtoSchema::Parse("M a 1,x,m:b,").ok());          // undefined message
  EXPECT_FALSE(ProtoSchema::Parse("M a 1,x,s, 1,y,s,").ok());     // number twice
  EXPECT_FALSE(ProtoSchema::Parse("M a 1,x,s,q").ok());           // unknown flag
  EXPECT_FALSE(ProtoSchema::Parse("M a 1,x,dur,").ok());          // unknown type
  EXPECT_FALSE(ProtoSchema::Parse("M a 1,,s,n").ok());            // inline scalar
  EXPECT_FALSE(ProtoSchema::Parse("K v1 A b\nM a 1,x,s,").ok());  // kind without message
  EXPECT_FALSE(ProtoSchema::Parse("X").ok());
  EXPECT_TRUE(ProtoSchema::Parse("# only a comment\n\n").ok());
}

TEST(ProtoJsonTest, WatchFramesDecodeWhereverTheStreamIsSplit) {
  auto schema = Schema();
  auto event = [](std::string_view type, const std::string& obj) {
    return Frame(Bytes(1, type) + Bytes(2, Bytes(1, obj)));
  };
  const std::string stream =
      event("ADDED", Envelope("v1", "Widget", Bytes(1, Bytes(1, "a")) + Int(3, 1))) +
      event("MODIFIED", Envelope("v1", "Widget", RichWidget())) +
      event("BOOKMARK", Envelope("v1", "Widget", Bytes(1, Bytes(1, "")))) +
      event("ERROR", Envelope("v1", "Status",
                              Bytes(3, "Failure") + Bytes(4, "too old") + Bytes(5, "Expired") +
                                  Int(6, 410)));
  for (size_t cut = 0; cut <= stream.size(); ++cut) {
    WatchDecoder d(schema);
    std::deque<WatchEvent> out;
    ASSERT_TRUE(d.Feed(std::string_view(stream).substr(0, cut), out).ok()) << cut;
    ASSERT_TRUE(d.Feed(std::string_view(stream).substr(cut), out).ok()) << cut;
    ASSERT_TRUE(d.Finish(out).ok());
    ASSERT_EQ(out.size(), 4u) << cut;
    EXPECT_EQ(out[0].type, WatchEvent::Type::kAdded);
    EXPECT_EQ(out[0].object->name(), "a");
    EXPECT_EQ(out[1].type, WatchEvent::Type::kModified);
    EXPECT_EQ(out[1].object->name(), "w");
    EXPECT_EQ(out[1].object->labels().at("a"), "b");
    EXPECT_EQ(out[1].object->namespace_name(), "ns");
    EXPECT_EQ(out[1].object->resource_version(), "42");
    EXPECT_EQ(out[1].object->kind(), "Widget");
    EXPECT_FALSE(out[1].object->has_deletion_timestamp());  // a zero time is no deletion
    EXPECT_EQ(out[2].type, WatchEvent::Type::kBookmark);
    EXPECT_EQ(out[3].type, WatchEvent::Type::kError);
    EXPECT_TRUE(IsGone(out[3].error)) << out[3].error;
  }
}

TEST(ProtoJsonTest, BrokenWatchStreamsFail) {
  auto schema = Schema();
  WatchDecoder d(schema);
  std::deque<WatchEvent> out;
  // A frame cut short at the end of the stream.
  ASSERT_TRUE(d.Feed(Frame(Bytes(1, "ADDED")).substr(0, 5), out).ok());
  EXPECT_FALSE(d.Finish(out).ok());
  // An unknown event type, and a frame whose object has a field the schema lacks.
  WatchDecoder e(schema);
  EXPECT_FALSE(
      e.Feed(Frame(Bytes(1, "RENAMED") + Bytes(2, Bytes(1, Envelope("v1", "Widget", "")))), out)
          .ok());
  WatchDecoder f(schema);
  EXPECT_FALSE(
      f.Feed(Frame(Bytes(1, "ADDED") + Bytes(2, Bytes(1, Envelope("v1", "Widget", Int(77, 1))))),
             out)
          .ok());
  // A length past the limit.
  WatchDecoder g(schema);
  EXPECT_FALSE(g.Feed(std::string("\x7f\xff\xff\xff", 4), out).ok());
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace draco::k8s
