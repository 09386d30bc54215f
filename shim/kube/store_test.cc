#include "shim/kube/store.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kscore::kube {
namespace {

using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

nlohmann::json Pod(const std::string& name, const std::string& rv,
                   const std::string& uid = "") {
  return {{"metadata",
           {{"namespace", "ns"},
            {"name", name},
            {"uid", uid.empty() ? "uid-" + name : uid},
            {"resourceVersion", rv}}}};
}

// "add ns/a@1", "update ns/a@1->2", "delete ns/a@2" for compact expectations.
std::vector<std::string> Describe(const std::vector<Delta>& deltas) {
  std::vector<std::string> out;
  auto rv = [](const ObjectPtr& o) {
    return (*o)["metadata"]["resourceVersion"].get<std::string>();
  };
  for (const Delta& d : deltas) {
    const std::string key = Store::KeyOf(*d.obj);
    switch (d.type) {
      case Delta::Type::kAdded:
        out.push_back(absl::StrCat("add ", key, "@", rv(d.obj)));
        break;
      case Delta::Type::kUpdated:
        out.push_back(
            absl::StrCat("update ", key, "@", rv(d.old_obj), "->", rv(d.obj)));
        break;
      case Delta::Type::kDeleted:
        out.push_back(absl::StrCat("delete ", key, "@", rv(d.obj)));
        break;
    }
  }
  return out;
}

WatchEvent Event(WatchEvent::Type type, nlohmann::json obj) {
  return {type, std::move(obj)};
}

TEST(StoreTest, KeyOf) {
  EXPECT_EQ(Store::KeyOf(Pod("a", "1")), "ns/a");
  EXPECT_EQ(Store::KeyOf({{"metadata", {{"name", "node1"}}}}), "node1");
}

TEST(StoreTest, RelistDiffsAgainstTheStore) {
  Store store;
  EXPECT_THAT(
      Describe(store.Replace({Pod("a", "1"), Pod("b", "1"), Pod("c", "1")})),
      UnorderedElementsAre("add ns/a@1", "add ns/b@1", "add ns/c@1"));
  // Relist after being away (410): b changed, c was deleted meanwhile, d is
  // new, a is unchanged and not reported.
  EXPECT_THAT(
      Describe(store.Replace({Pod("a", "1"), Pod("b", "5"), Pod("d", "6")})),
      UnorderedElementsAre("update ns/b@1->5", "add ns/d@6", "delete ns/c@1"));
  EXPECT_EQ(store.size(), 3u);
  EXPECT_EQ(store.Get("ns/c"), nullptr);
  ASSERT_NE(store.Get("ns/b"), nullptr);
  EXPECT_EQ((*store.Get("ns/b"))["metadata"]["resourceVersion"], "5");
}

TEST(StoreTest, UidChangeIsDeleteThenAdd) {
  Store store;
  store.Replace({Pod("a", "1", "old")});
  EXPECT_THAT(Describe(store.Replace({Pod("a", "2", "new")})),
              ElementsAre("delete ns/a@1", "add ns/a@2"));
  EXPECT_THAT(Describe(store.Apply(
                  Event(WatchEvent::Type::kModified, Pod("a", "3", "newer")))),
              ElementsAre("delete ns/a@2", "add ns/a@3"));
}

TEST(StoreTest, WatchEvents) {
  Store store;
  using T = WatchEvent::Type;
  EXPECT_THAT(Describe(store.Apply(Event(T::kAdded, Pod("a", "1")))),
              ElementsAre("add ns/a@1"));
  EXPECT_THAT(Describe(store.Apply(Event(T::kModified, Pod("a", "2")))),
              ElementsAre("update ns/a@1->2"));
  // ADDED for a known key (watch overlapping a list) is an update.
  EXPECT_THAT(Describe(store.Apply(Event(T::kAdded, Pod("a", "3")))),
              ElementsAre("update ns/a@2->3"));
  // MODIFIED for an unknown key is an add.
  EXPECT_THAT(Describe(store.Apply(Event(T::kModified, Pod("b", "4")))),
              ElementsAre("add ns/b@4"));
  EXPECT_THAT(Describe(store.Apply(Event(T::kDeleted, Pod("a", "5")))),
              ElementsAre("delete ns/a@5"));
  EXPECT_THAT(Describe(store.Apply(Event(T::kDeleted, Pod("zz", "6")))),
              ElementsAre());
  EXPECT_THAT(Describe(store.Apply(Event(T::kBookmark, Pod("", "7")))),
              ElementsAre());
  EXPECT_EQ(store.size(), 1u);
}

TEST(ParseWatchEventTest, Types) {
  absl::StatusOr<WatchEvent> e = ParseWatchEvent(
      R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"42"}}})");
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->type, WatchEvent::Type::kBookmark);
  EXPECT_EQ(e->object["metadata"]["resourceVersion"], "42");

  e = ParseWatchEvent(
      R"({"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired"}})");
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->type, WatchEvent::Type::kError);
  EXPECT_EQ(e->object["code"], 410);

  EXPECT_EQ(ParseWatchEvent(R"({"type":"ADDED","object":{}})")->type,
            WatchEvent::Type::kAdded);
  EXPECT_EQ(ParseWatchEvent(R"({"type":"MODIFIED","object":{}})")->type,
            WatchEvent::Type::kModified);
  EXPECT_EQ(ParseWatchEvent(R"({"type":"DELETED","object":{}})")->type,
            WatchEvent::Type::kDeleted);
  EXPECT_FALSE(ParseWatchEvent("not json").ok());
  EXPECT_FALSE(ParseWatchEvent(R"({"type":"ADDED"})").ok());
  EXPECT_FALSE(ParseWatchEvent(R"({"type":"WEIRD","object":{}})").ok());
}

TEST(StoreTest, KeepsTheProjectionButHandsOutWholeObjects) {
  Store store([](const nlohmann::json& obj) {
    return nlohmann::json{{"spec", obj["spec"]}};  // drops status, labels
  });
  nlohmann::json a = Pod("a", "1");
  a["spec"] = {{"nodeName", "n1"}};
  a["status"] = {{"phase", "Pending"}};
  a["metadata"]["labels"] = {{"app", "web"}};
  std::vector<Delta> d = store.Apply({WatchEvent::Type::kAdded, a});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ((*d[0].obj)["status"]["phase"], "Pending");  // whole, for handlers
  const ObjectPtr kept = store.Get("ns/a");
  ASSERT_NE(kept, nullptr);
  EXPECT_FALSE(kept->contains("status"));
  EXPECT_FALSE((*kept)["metadata"].contains("labels"));
  EXPECT_EQ((*kept)["spec"]["nodeName"], "n1");
  // Identity survives any projection: updates and uid changes still work.
  EXPECT_EQ((*kept)["metadata"]["uid"], "uid-a");
  EXPECT_EQ((*kept)["metadata"]["resourceVersion"], "1");
  nlohmann::json a2 = Pod("a", "2");
  a2["spec"] = {{"nodeName", "n2"}};
  d = store.Apply({WatchEvent::Type::kModified, a2});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].type, Delta::Type::kUpdated);
  EXPECT_EQ((*d[0].old_obj)["spec"]["nodeName"], "n1");
  EXPECT_FALSE(d[0].old_obj->contains("status"));
  // A relist that misses it reports the kept state as the last known one.
  d = store.Replace({});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].type, Delta::Type::kDeleted);
  EXPECT_EQ(Store::KeyOf(*d[0].obj), "ns/a");
  EXPECT_EQ((*d[0].obj)["spec"]["nodeName"], "n2");
}

}  // namespace
}  // namespace kscore::kube
