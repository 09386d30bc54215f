#include "shim/cache/cache.h"

#include <limits>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scorer/framework/scalar_resources.h"

namespace kscore::cache {
namespace {

using ::testing::ElementsAre;

PodInfo Pod(const std::string& ns, const std::string& name,
            const std::string& app, const std::string& node,
            int64_t cpu = 100) {
  PodInfo p;
  p.namespace_ = ns;
  p.name = name;
  p.key = ns + "/" + name;
  p.uid = name + "-uid";
  p.node_name = node;
  p.phase = "Running";
  if (!app.empty()) (*p.pod.mutable_labels())["app"] = app;
  p.pod.set_namespace_(ns);
  p.requests.set_milli_cpu(cpu);
  p.non_zero.set_milli_cpu(cpu);
  return p;
}

pb::Node Node(const std::string& name) {
  pb::Node n;
  n.set_name(name);
  n.mutable_allocatable()->set_milli_cpu(4000);
  return n;
}

std::map<std::string, pb::Node> Candidates(const Cache& c,
                                           const PodInfo& incoming) {
  google::protobuf::RepeatedPtrField<pb::Node> out;
  c.FillCandidates(incoming, {"app"}, 0, 100, &out);
  std::map<std::string, pb::Node> m;
  for (const pb::Node& n : out) m[n.name()] = n;
  return m;
}

int64_t Count(const pb::Node& n) {
  return n.label_counts_size() ? n.label_counts(0).count() : 0;
}

TEST(CacheTest, LabelCountsAreForTheIncomingPodsNamespaceAndValue) {
  Cache c;
  c.UpsertNode(Node("a"));
  c.UpsertNode(Node("b"));
  c.UpsertAssignedPod(Pod("ns", "w1", "web", "a"));
  c.UpsertAssignedPod(Pod("ns", "w2", "web", "a"));
  c.UpsertAssignedPod(Pod("other", "w3", "web", "b"));  // other namespace
  c.UpsertAssignedPod(Pod("ns", "d1", "db", "b"));      // other value
  PodInfo done = Pod("ns", "w4", "web", "b");
  done.phase =
      "Succeeded";  // terminated: neither counted nor holding resources
  c.UpsertAssignedPod(done);
  PodInfo leaving = Pod("ns", "w5", "web", "b");
  leaving.deleting = true;  // being deleted: holds resources, not counted
  c.UpsertAssignedPod(leaving);

  auto m = Candidates(c, Pod("ns", "new", "web", ""));
  EXPECT_EQ(Count(m["a"]), 2);
  EXPECT_EQ(Count(m["b"]), 0);
  EXPECT_EQ(m["a"].requested().milli_cpu(), 200);
  EXPECT_EQ(m["b"].requested().milli_cpu(), 300);
  EXPECT_EQ(m["b"].pod_count(), 4);
  ASSERT_EQ(m["a"].label_counts_size(), 1);
  EXPECT_EQ(m["a"].label_counts(0).value(), "web");
}

// Requests near the int64 limit: a node's sum is sent saturated, never
// wrapped into a small or negative one (that every pod would fit), and a pod
// leaving takes back exactly what it added.
TEST(CacheTest, AggregatesSaturateAndStayExact) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  Cache c;
  c.UpsertNode(Node("a"));
  PodInfo big1 = Pod("ns", "big1", "web", "a", kMax - 1);
  PodInfo big2 = Pod("ns", "big2", "web", "a", kMax - 1);
  big1.requests.set_memory(kMax);
  big2.requests.set_memory(kMax);
  framework::MutableScalar(&big1.requests, "example.com/gpu")->set_value(kMax);
  framework::MutableScalar(&big2.requests, "example.com/gpu")->set_value(kMax);
  c.UpsertAssignedPod(big1);
  c.UpsertAssignedPod(big2);
  c.UpsertAssignedPod(Pod("ns", "small", "web", "a", 100));
  pb::Node a = Candidates(c, Pod("ns", "new", "web", ""))["a"];
  EXPECT_EQ(a.requested().milli_cpu(), kMax);
  EXPECT_EQ(a.requested().memory(), kMax);
  EXPECT_EQ(framework::ScalarValue(a.requested(), "example.com/gpu"), kMax);
  EXPECT_EQ(a.non_zero_requested().milli_cpu(), kMax);

  c.RemovePod("ns/big2");
  a = Candidates(c, Pod("ns", "new", "web", ""))["a"];
  EXPECT_EQ(a.requested().milli_cpu(), kMax);  // (MAX - 1) + 100
  c.RemovePod("ns/small");
  a = Candidates(c, Pod("ns", "new", "web", ""))["a"];
  EXPECT_EQ(a.requested().milli_cpu(), kMax - 1);
  EXPECT_EQ(a.requested().memory(), kMax);
  c.RemovePod("ns/big1");
  a = Candidates(c, Pod("ns", "new", "web", ""))["a"];
  EXPECT_FALSE(a.requested().has_milli_cpu());
  EXPECT_FALSE(a.requested().has_memory());
  EXPECT_EQ(a.requested().scalar_size(), 0);
}

TEST(CacheTest, UpdatesAndDeletesSubtractExactly) {
  Cache c;
  c.UpsertNode(Node("a"));
  c.UpsertNode(Node("b"));
  PodInfo w1 = Pod("ns", "w1", "web", "a", 300);
  framework::MutableScalar(&w1.requests, "example.com/gpu")->set_value(1);
  c.UpsertAssignedPod(w1);
  w1.node_name = "b";
  c.UpsertAssignedPod(w1);  // moved (re-created elsewhere)
  auto m = Candidates(c, Pod("ns", "new", "web", ""));
  EXPECT_EQ(m["a"].requested().milli_cpu(), 0);
  // An extended resource back at 0 leaves no entry behind.
  EXPECT_EQ(m["a"].requested().scalar_size(), 0);
  EXPECT_EQ(framework::ScalarValue(m["b"].requested(), "example.com/gpu"), 1);
  EXPECT_EQ(Count(m["a"]), 0);
  EXPECT_EQ(Count(m["b"]), 1);
  c.RemovePod("ns/w1");
  m = Candidates(c, Pod("ns", "new", "web", ""));
  EXPECT_EQ(m["b"].requested().milli_cpu(), 0);
  EXPECT_EQ(m["b"].pod_count(), 0);
  EXPECT_EQ(m["b"].requested().scalar_size(), 0);
  EXPECT_EQ(c.PodCount(), 0u);
}

TEST(CacheTest, AssumedPodsCountUntilForgottenOrConfirmed) {
  Cache c;
  c.UpsertNode(Node("a"));
  PodInfo p = Pod("ns", "w1", "web", "");
  ASSERT_TRUE(c.AssumePod(p, "a"));
  EXPECT_FALSE(c.AssumePod(p, "a"));  // never twice
  EXPECT_TRUE(c.IsAssumed("ns/w1"));
  EXPECT_EQ(Count(Candidates(c, Pod("ns", "new", "web", ""))["a"]), 1);
  c.ForgetPod("ns/w1");
  EXPECT_EQ(Count(Candidates(c, Pod("ns", "new", "web", ""))["a"]), 0);
  ASSERT_TRUE(c.AssumePod(p, "a"));
  p.node_name = "a";
  c.UpsertAssignedPod(p);  // the informer confirms the binding
  EXPECT_FALSE(c.IsAssumed("ns/w1"));
  c.ForgetPod("ns/w1");  // no effect once confirmed
  EXPECT_EQ(Count(Candidates(c, Pod("ns", "new", "web", ""))["a"]), 1);
}

TEST(CacheTest, HostPortsAndRemovedNodes) {
  Cache c;
  c.UpsertNode(Node("a"));
  PodInfo p = Pod("ns", "p", "", "a");
  pb::HostPort& hp = p.host_ports.emplace_back();
  hp.set_port(80);
  hp.set_protocol("TCP");
  c.UpsertAssignedPod(p);
  EXPECT_EQ(Candidates(c, Pod("ns", "x", "", ""))["a"].used_ports_size(), 1);
  c.RemoveNode("a");
  EXPECT_EQ(c.NodeCount(), 0u);
  EXPECT_TRUE(Candidates(c, Pod("ns", "x", "", "")).empty());
  c.RemovePod("ns/p");
  c.UpsertNode(Node("a"));
  EXPECT_EQ(Candidates(c, Pod("ns", "x", "", ""))["a"].used_ports_size(), 0);
}

TEST(CacheTest, LabelsOnlyWhenAsked) {
  Cache c;
  pb::Node n = Node("a");
  (*n.mutable_labels())["zone"] = "z1";
  n.add_taints()->set_key("t");
  c.UpsertNode(n);
  google::protobuf::RepeatedPtrField<pb::Node> out;
  c.FillCandidates(Pod("ns", "x", "", ""), {}, 0, 1, &out,
                   /*with_labels=*/false);
  EXPECT_TRUE(out[0].labels().empty());
  EXPECT_EQ(out[0].taints_size(), 1);
  EXPECT_EQ(out[0].allocatable().milli_cpu(), 4000);
  c.FillCandidates(Pod("ns", "x", "", ""), {}, 0, 1, &out,
                   /*with_labels=*/true);
  EXPECT_EQ(out[1].labels().at("zone"), "z1");
}

TEST(CacheTest, CandidateWindowWraps) {
  Cache c;
  for (const char* n : {"a", "b", "c"}) c.UpsertNode(Node(n));
  google::protobuf::RepeatedPtrField<pb::Node> out;
  EXPECT_EQ(c.FillCandidates(Pod("ns", "x", "", ""), {}, 2, 2, &out), 2u);
  EXPECT_EQ(out[0].name(), "c");
  EXPECT_EQ(out[1].name(), "a");
}

// kube-scheduler's node tree: candidates interleave zones, so a window of a
// few nodes covers every zone; nodes without zone labels form one zone.
TEST(CacheTest, CandidatesInterleaveZonesAsKubeSchedulersNodeTree) {
  Cache c;
  auto zoned = [](const std::string& name, const std::string& zone) {
    pb::Node n = Node(name);
    if (!zone.empty()) {
      (*n.mutable_labels())["topology.kubernetes.io/region"] = "r";
      (*n.mutable_labels())["topology.kubernetes.io/zone"] = zone;
    }
    return n;
  };
  for (const auto& [name, zone] :
       std::vector<std::pair<std::string, std::string>>{{"a1", "a"},
                                                        {"a2", "a"},
                                                        {"a3", "a"},
                                                        {"b1", "b"},
                                                        {"b2", "b"},
                                                        {"c1", "c"}}) {
    c.UpsertNode(zoned(name, zone));
  }
  auto names = [&](size_t start, size_t count) {
    google::protobuf::RepeatedPtrField<pb::Node> out;
    c.FillCandidates(Pod("ns", "x", "", ""), {}, start, count, &out);
    std::vector<std::string> got;
    for (const pb::Node& n : out) got.push_back(n.name());
    return got;
  };
  EXPECT_THAT(names(0, 6), ElementsAre("a1", "b1", "c1", "a2", "b2", "a3"));
  EXPECT_THAT(names(0, 3), ElementsAre("a1", "b1", "c1"));
  // b1 moves to zone c, c1 goes, d1 comes without zone labels.
  c.UpsertNode(zoned("b1", "c"));
  c.RemoveNode("c1");
  c.UpsertNode(zoned("d1", ""));
  EXPECT_THAT(names(0, 6), ElementsAre("a1", "b2", "b1", "d1", "a2", "a3"));
  EXPECT_EQ(c.NodeCount(), 6u);
  EXPECT_EQ(Cache::ZoneKey(zoned("x", "z").labels()), std::string("r:\0:z", 5));
  // The failure-domain.beta labels stand in for missing GA ones.
  pb::Node beta = Node("y");
  (*beta.mutable_labels())["failure-domain.beta.kubernetes.io/region"] = "r";
  (*beta.mutable_labels())["failure-domain.beta.kubernetes.io/zone"] = "z";
  EXPECT_EQ(Cache::ZoneKey(beta.labels()), std::string("r:\0:z", 5));
}

TEST(CacheTest, EncodedCandidatesFollowNodeAndPodChanges) {
  Cache c;
  c.UpsertNode(Node("a"));
  c.UpsertAssignedPod(Pod("ns", "w1", "web", "a", 300));
  pb::Node bigger = Node("a");
  bigger.mutable_allocatable()->set_milli_cpu(8000);
  c.UpsertNode(bigger);  // the Node changes after its pods arrived
  PodInfo incoming = Pod("ns", "new", "web", "");
  // Field 4 of FilterRequest is its `repeated Node nodes`.
  std::string wire;
  ASSERT_EQ(c.AppendCandidates(incoming, {"app"}, 0, 1, true, 4, &wire), 1u);
  pb::FilterRequest filter;
  ASSERT_TRUE(filter.ParseFromString(wire));
  ASSERT_EQ(filter.nodes_size(), 1);
  const pb::Node& a = filter.nodes(0);
  EXPECT_EQ(a.allocatable().milli_cpu(), 8000);
  EXPECT_EQ(a.requested().milli_cpu(), 300);
  EXPECT_EQ(a.pod_count(), 1);
  EXPECT_EQ(Count(a), 1);
  c.UpsertAssignedPod(Pod("ns", "w2", "web", "a", 200));
  wire.clear();
  c.AppendCandidates(incoming, {"app"}, 0, 1, true, 4, &wire);
  ASSERT_TRUE(filter.ParseFromString(wire));
  EXPECT_EQ(filter.nodes(0).requested().milli_cpu(), 500);
  EXPECT_EQ(filter.nodes(0).pod_count(), 2);
  EXPECT_EQ(Count(filter.nodes(0)), 2);
  EXPECT_EQ(filter.nodes(0).allocatable().milli_cpu(), 8000);
}

// Without labels, candidates are read from the cache's contiguous slots: they
// must follow node removals (slots shift), pod changes and names too long
// for a slot, and give the same names and counts as the entries.
TEST(CacheTest, LabelFreeCandidatesFollowRemovalsAndLongNames) {
  Cache c;
  const std::string long_name(200, 'z');
  for (const std::string& n :
       {std::string("a"), std::string("b"), std::string("c"), long_name}) {
    c.UpsertNode(Node(n));
  }
  c.UpsertAssignedPod(Pod("ns", "w1", "web", "b"));
  c.UpsertAssignedPod(Pod("ns", "w2", "web", "c", 300));
  c.UpsertAssignedPod(Pod("ns", "w3", "web", long_name, 700));
  c.RemoveNode("b");
  const PodInfo incoming = Pod("ns", "new", "web", "");
  auto append = [&](std::vector<std::string>* names) {
    std::string wire;
    c.AppendCandidates(incoming, {"app"}, 0, 10, false, 4, &wire, names);
    pb::FilterRequest filter;
    EXPECT_TRUE(filter.ParseFromString(wire));
    return filter;
  };
  std::vector<std::string> names;
  pb::FilterRequest got = append(&names);
  EXPECT_THAT(names, ::testing::ElementsAre("a", "c", long_name));
  ASSERT_EQ(got.nodes_size(), 3);
  EXPECT_EQ(got.nodes(0).name(), "a");
  EXPECT_EQ(Count(got.nodes(0)), 0);
  EXPECT_EQ(got.nodes(1).name(), "c");
  EXPECT_EQ(got.nodes(1).requested().milli_cpu(), 300);
  EXPECT_EQ(Count(got.nodes(1)), 1);
  EXPECT_EQ(got.nodes(2).name(), long_name);
  EXPECT_EQ(got.nodes(2).requested().milli_cpu(), 700);
  EXPECT_EQ(Count(got.nodes(2)), 1);

  c.UpsertAssignedPod(Pod("ns", "w4", "web", "c", 100));
  c.RemoveNode("a");
  names.clear();
  got = append(&names);
  EXPECT_THAT(names, ::testing::ElementsAre("c", long_name));
  ASSERT_EQ(got.nodes_size(), 2);
  EXPECT_EQ(got.nodes(0).requested().milli_cpu(), 400);
  EXPECT_EQ(got.nodes(0).pod_count(), 2);
  EXPECT_EQ(Count(got.nodes(0)), 2);
  c.RemovePod("ns/w2");
  c.RemovePod("ns/w4");
  got = append(nullptr);
  EXPECT_EQ(Count(got.nodes(0)), 0);
  EXPECT_EQ(got.nodes(0).requested().milli_cpu(), 0);
}

}  // namespace
}  // namespace kscore::cache
