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

using JsonStore = Store<nlohmann::json>;
using JsonPtr = Ptr<nlohmann::json>;

Decoded<nlohmann::json> D(nlohmann::json obj) {
  Identity id = JsonIdentity(obj);
  return {std::move(id),
          std::make_shared<const nlohmann::json>(std::move(obj))};
}

std::vector<Decoded<nlohmann::json>> Items(
    std::initializer_list<nlohmann::json> objs) {
  std::vector<Decoded<nlohmann::json>> out;
  for (const nlohmann::json& o : objs) out.push_back(D(o));
  return out;
}

// "add ns/a@1", "update ns/a@1->2", "delete ns/a@2" for compact expectations.
std::vector<std::string> Describe(
    const std::vector<Delta<nlohmann::json>>& deltas) {
  std::vector<std::string> out;
  auto rv = [](const JsonPtr& o) {
    return (*o)["metadata"]["resourceVersion"].get<std::string>();
  };
  for (const Delta<nlohmann::json>& d : deltas) {
    const std::string key = JsonIdentity(*d.obj).key;
    switch (d.type) {
      case DeltaType::kAdded:
        out.push_back(absl::StrCat("add ", key, "@", rv(d.obj)));
        break;
      case DeltaType::kUpdated:
        out.push_back(
            absl::StrCat("update ", key, "@", rv(d.old_obj), "->", rv(d.obj)));
        break;
      case DeltaType::kDeleted:
        out.push_back(absl::StrCat("delete ", key, "@", rv(d.obj)));
        break;
    }
  }
  return out;
}

TEST(StoreTest, JsonIdentity) {
  const Identity id = JsonIdentity(Pod("a", "1"));
  EXPECT_EQ(id.key, "ns/a");
  EXPECT_EQ(id.uid, "uid-a");
  EXPECT_EQ(id.resource_version, "1");
  EXPECT_EQ(JsonIdentity({{"metadata", {{"name", "node1"}}}}).key, "node1");
}

TEST(StoreTest, RelistDiffsAgainstTheStore) {
  JsonStore store;
  EXPECT_THAT(Describe(store.Replace(
                  Items({Pod("a", "1"), Pod("b", "1"), Pod("c", "1")}))),
              UnorderedElementsAre("add ns/a@1", "add ns/b@1", "add ns/c@1"));
  // Relist after being away (410): b changed, c was deleted meanwhile, d is
  // new, a is unchanged and not reported.
  EXPECT_THAT(
      Describe(
          store.Replace(Items({Pod("a", "1"), Pod("b", "5"), Pod("d", "6")}))),
      UnorderedElementsAre("update ns/b@1->5", "add ns/d@6", "delete ns/c@1"));
  EXPECT_EQ(store.size(), 3u);
  EXPECT_EQ(store.Get("ns/c"), nullptr);
  ASSERT_NE(store.Get("ns/b"), nullptr);
  EXPECT_EQ((*store.Get("ns/b"))["metadata"]["resourceVersion"], "5");
}

TEST(StoreTest, UidChangeIsDeleteThenAdd) {
  JsonStore store;
  store.Replace(Items({Pod("a", "1", "old")}));
  EXPECT_THAT(Describe(store.Replace(Items({Pod("a", "2", "new")}))),
              ElementsAre("delete ns/a@1", "add ns/a@2"));
  EXPECT_THAT(Describe(store.Apply(WatchEvent::Type::kModified,
                                   D(Pod("a", "3", "newer")))),
              ElementsAre("delete ns/a@2", "add ns/a@3"));
}

TEST(StoreTest, WatchEvents) {
  JsonStore store;
  using T = WatchEvent::Type;
  EXPECT_THAT(Describe(store.Apply(T::kAdded, D(Pod("a", "1")))),
              ElementsAre("add ns/a@1"));
  EXPECT_THAT(Describe(store.Apply(T::kModified, D(Pod("a", "2")))),
              ElementsAre("update ns/a@1->2"));
  // ADDED for a known key (watch overlapping a list) is an update.
  EXPECT_THAT(Describe(store.Apply(T::kAdded, D(Pod("a", "3")))),
              ElementsAre("update ns/a@2->3"));
  // MODIFIED for an unknown key is an add.
  EXPECT_THAT(Describe(store.Apply(T::kModified, D(Pod("b", "4")))),
              ElementsAre("add ns/b@4"));
  EXPECT_THAT(Describe(store.Apply(T::kDeleted, D(Pod("a", "5")))),
              ElementsAre("delete ns/a@5"));
  EXPECT_THAT(Describe(store.Apply(T::kDeleted, D(Pod("zz", "6")))),
              ElementsAre());
  EXPECT_THAT(Describe(store.Apply(T::kBookmark, D(Pod("", "7")))),
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
  JsonStore store([](const nlohmann::json& obj) {
    return nlohmann::json{{"spec", obj["spec"]}};  // drops metadata, status
  });
  nlohmann::json a = Pod("a", "1");
  a["spec"] = {{"nodeName", "n1"}};
  a["status"] = {{"phase", "Pending"}};
  a["metadata"]["labels"] = {{"app", "web"}};
  std::vector<Delta<nlohmann::json>> d =
      store.Apply(WatchEvent::Type::kAdded, D(a));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ((*d[0].obj)["status"]["phase"], "Pending");  // whole, for handlers
  const JsonPtr kept = store.Get("ns/a");
  ASSERT_NE(kept, nullptr);
  EXPECT_FALSE(kept->contains("status"));
  EXPECT_EQ((*kept)["spec"]["nodeName"], "n1");
  EXPECT_FALSE(kept->contains("metadata"));
  nlohmann::json a2 = Pod("a", "2");
  a2["spec"] = {{"nodeName", "n2"}};
  // The identity is kept beside any projection: this is an update of the
  // same object, not a delete and an add.
  d = store.Apply(WatchEvent::Type::kModified, D(a2));
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].type, DeltaType::kUpdated);
  EXPECT_EQ((*d[0].old_obj)["spec"]["nodeName"], "n1");
  EXPECT_FALSE(d[0].old_obj->contains("status"));
  // A relist of the same version changes nothing; one that misses it
  // reports the kept state as the last known one.
  EXPECT_TRUE(store.Replace(Items({a2})).empty());
  d = store.Replace({});
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].type, DeltaType::kDeleted);
  EXPECT_EQ((*d[0].obj)["spec"]["nodeName"], "n2");
}

}  // namespace
}  // namespace kscore::kube
