#include "shim/cache/cache.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/node_key.h"
#include "model/scalar_resources.h"
#include "shim/cache/testing/candidates.h"

namespace kscore::cache {
namespace {

using ::testing::ElementsAre;

objects::PodInfo Pod(const std::string& ns, const std::string& name,
                     const std::string& app, const std::string& node,
                     int64_t cpu = 100) {
  objects::PodInfo p;
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
                                           const objects::PodInfo& incoming) {
  google::protobuf::RepeatedPtrField<pb::Node> out;
  testing::FillCandidates(c, incoming, {"app"}, 0, 100, &out);
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
  objects::PodInfo done = Pod("ns", "w4", "web", "b");
  done.phase =
      "Succeeded";  // terminated: neither counted nor holding resources
  c.UpsertAssignedPod(done);
  objects::PodInfo leaving = Pod("ns", "w5", "web", "b");
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
  objects::PodInfo big1 = Pod("ns", "big1", "web", "a", kMax - 1);
  objects::PodInfo big2 = Pod("ns", "big2", "web", "a", kMax - 1);
  big1.requests.set_memory(kMax);
  big2.requests.set_memory(kMax);
  model::MutableScalar(&big1.requests, "example.com/gpu")->set_value(kMax);
  model::MutableScalar(&big2.requests, "example.com/gpu")->set_value(kMax);
  c.UpsertAssignedPod(big1);
  c.UpsertAssignedPod(big2);
  c.UpsertAssignedPod(Pod("ns", "small", "web", "a", 100));
  pb::Node a = Candidates(c, Pod("ns", "new", "web", ""))["a"];
  EXPECT_EQ(a.requested().milli_cpu(), kMax);
  EXPECT_EQ(a.requested().memory(), kMax);
  EXPECT_EQ(model::ScalarValue(a.requested(), "example.com/gpu"), kMax);
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
  objects::PodInfo w1 = Pod("ns", "w1", "web", "a", 300);
  model::MutableScalar(&w1.requests, "example.com/gpu")->set_value(1);
  c.UpsertAssignedPod(w1);
  w1.node_name = "b";
  c.UpsertAssignedPod(w1);  // moved (re-created elsewhere)
  auto m = Candidates(c, Pod("ns", "new", "web", ""));
  EXPECT_EQ(m["a"].requested().milli_cpu(), 0);
  // An extended resource back at 0 leaves no entry behind.
  EXPECT_EQ(m["a"].requested().scalar_size(), 0);
  EXPECT_EQ(model::ScalarValue(m["b"].requested(), "example.com/gpu"), 1);
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
  objects::PodInfo p = Pod("ns", "w1", "web", "");
  ASSERT_TRUE(c.AssumePod(p, "a"));
  EXPECT_FALSE(c.AssumePod(p, "a"));  // never twice
  EXPECT_EQ(c.NodeOf("ns/w1"), "a");
  EXPECT_EQ(Count(Candidates(c, Pod("ns", "new", "web", ""))["a"]), 1);
  c.ForgetPod("ns/w1");
  EXPECT_EQ(c.NodeOf("ns/w1"), "");
  EXPECT_EQ(Count(Candidates(c, Pod("ns", "new", "web", ""))["a"]), 0);
  ASSERT_TRUE(c.AssumePod(p, "a"));
  p.node_name = "a";
  c.UpsertAssignedPod(p);  // the informer confirms the binding
  c.ForgetPod("ns/w1");    // no effect once confirmed: no longer assumed
  EXPECT_EQ(c.NodeOf("ns/w1"), "a");
  EXPECT_EQ(Count(Candidates(c, Pod("ns", "new", "web", ""))["a"]), 1);
}

TEST(CacheTest, HostPortsAndRemovedNodes) {
  Cache c;
  c.UpsertNode(Node("a"));
  objects::PodInfo p = Pod("ns", "p", "", "a");
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
  testing::FillCandidates(c, Pod("ns", "x", "", ""), {}, 0, 1, &out,
                          /*with_labels=*/false);
  EXPECT_TRUE(out[0].labels().empty());
  EXPECT_EQ(out[0].taints_size(), 1);
  EXPECT_EQ(out[0].allocatable().milli_cpu(), 4000);
  testing::FillCandidates(c, Pod("ns", "x", "", ""), {}, 0, 1, &out,
                          /*with_labels=*/true);
  EXPECT_EQ(out[1].labels().at("zone"), "z1");
}

TEST(CacheTest, CandidateWindowWraps) {
  Cache c;
  for (const char* n : {"a", "b", "c"}) c.UpsertNode(Node(n));
  google::protobuf::RepeatedPtrField<pb::Node> out;
  EXPECT_EQ(testing::FillCandidates(c, Pod("ns", "x", "", ""), {}, 2, 2, &out),
            2u);
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
    testing::FillCandidates(c, Pod("ns", "x", "", ""), {}, start, count, &out);
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
  objects::PodInfo incoming = Pod("ns", "new", "web", "");
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
  const objects::PodInfo incoming = Pod("ns", "new", "web", "");
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

std::shared_ptr<const objects::PdbInfo> Pdb(const std::string& ns,
                                            const std::string& name,
                                            const std::string& app,
                                            int32_t allowed = 1) {
  auto p = std::make_shared<objects::PdbInfo>();
  p->namespace_ = ns;
  p->name = name;
  p->has_selector = true;
  if (!app.empty()) (*p->selector.mutable_match_labels())["app"] = app;
  p->disruptions_allowed = allowed;
  return p;
}

std::vector<std::string> Names(
    const std::vector<std::shared_ptr<const objects::PdbInfo>>& pdbs) {
  std::vector<std::string> names;
  for (const auto& p : pdbs) names.push_back(p->name);
  return names;
}

// Batching reads the changes since a point: a pod's coming and going names
// its node; the same Node again changes nothing; a changed, new or removed
// node, a nomination, or a namespace's labels mean every node counts as
// changed.
TEST(CacheTest, ChangedSinceNamesTheNodesWhosePodsChanged) {
  Cache c;
  c.UpsertNode(Node("n1"));
  c.UpsertNode(Node("n2"));
  c.UpsertNode(Node("n3"));
  auto changed = [&c](uint64_t seq) -> std::optional<std::set<std::string>> {
    std::vector<std::string> names;
    if (!c.ChangedSince(seq, &names)) return std::nullopt;
    return std::set<std::string>(names.begin(), names.end());
  };
  uint64_t seq = c.ChangeSeq();
  EXPECT_EQ(changed(seq), std::set<std::string>{});
  ASSERT_TRUE(c.AssumePod(Pod("d", "a", "web", ""), "n2"));
  c.UpsertAssignedPod(Pod("d", "b", "web", "n3"));
  EXPECT_EQ(changed(seq), (std::set<std::string>{"n2", "n3"}));
  seq = c.ChangeSeq();
  c.RemovePod("d/b");
  c.UpsertNode(Node("n1"));  // unchanged
  EXPECT_EQ(changed(seq), std::set<std::string>{"n3"});
  pb::Node bigger = Node("n1");
  bigger.mutable_allocatable()->set_milli_cpu(8000);
  c.UpsertNode(bigger);
  EXPECT_EQ(changed(seq), std::nullopt);
  seq = c.ChangeSeq();
  c.UpsertNode(Node("n4"));
  EXPECT_EQ(changed(seq), std::nullopt);
  seq = c.ChangeSeq();
  c.RemoveNode("n4");
  EXPECT_EQ(changed(seq), std::nullopt);
  seq = c.ChangeSeq();
  // A nomination changes its node; moved, both nodes; dropped, its node.
  objects::PodInfo pending = Pod("d", "p", "web", "");
  c.Nominate(pending, "n1");
  EXPECT_EQ(changed(seq), std::set<std::string>{"n1"});
  seq = c.ChangeSeq();
  c.Nominate(pending, "n2");
  EXPECT_EQ(changed(seq), (std::set<std::string>{"n1", "n2"}));
  seq = c.ChangeSeq();
  c.DropNomination(pending.key);
  EXPECT_EQ(changed(seq), std::set<std::string>{"n2"});
  seq = c.ChangeSeq();
  // Older changes than the cache remembers: every node counts as changed.
  for (int i = 0; i < (1 << 16) + 1; ++i) {
    c.UpsertAssignedPod(Pod("d", "churn", "web", "n2", i % 7 + 1));
  }
  EXPECT_EQ(changed(seq), std::nullopt);
  seq = c.ChangeSeq();
  c.RemovePod("d/churn");
  EXPECT_EQ(changed(seq), std::set<std::string>{"n2"});
  // What a query's namespace selector matches: a namespace that comes,
  // changes its labels or goes; not the same labels again.
  model::LabelMap team;
  team["team"] = "a";
  seq = c.ChangeSeq();
  c.UpsertNamespace("d", team);
  EXPECT_EQ(changed(seq), std::nullopt);
  seq = c.ChangeSeq();
  c.UpsertNamespace("d", team);
  EXPECT_EQ(changed(seq), std::set<std::string>{});
  team["team"] = "b";
  c.UpsertNamespace("d", team);
  EXPECT_EQ(changed(seq), std::nullopt);
  seq = c.ChangeSeq();
  c.RemoveNamespace("d");
  EXPECT_EQ(changed(seq), std::nullopt);
}

// The watch's copy of a pod bound as it was assumed leaves its node as it
// is: same content key, not counted as changed (a batched cycle does not
// send it again); a pod bound otherwise than assumed changes it.
TEST(CacheTest, ABindingAsAssumedLeavesTheNodeUnchanged) {
  Cache c;
  c.UpsertNode(Node("n1"));
  const objects::PodInfo incoming = Pod("d", "in", "web", "");
  auto key = [&] {
    std::string out;
    c.AppendCandidates(incoming, {"app"}, 0, 1, true,
                       pb::EvaluateRequest::kNodesFieldNumber, &out, nullptr,
                       nullptr, NodeForm::kKey);
    pb::EvaluateRequest req;
    EXPECT_TRUE(req.ParseFromString(out));
    return req.nodes(0).content_key();
  };
  ASSERT_TRUE(c.AssumePod(Pod("d", "a", "web", ""), "n1"));
  const std::string assumed = key();
  uint64_t seq = c.ChangeSeq();
  c.UpsertAssignedPod(Pod("d", "a", "web", "n1"));
  std::vector<std::string> names;
  ASSERT_TRUE(c.ChangedSince(seq, &names));
  EXPECT_THAT(names, ElementsAre());
  EXPECT_EQ(key(), assumed);
  // The same bound pod again (a status change kscore does not read): the
  // same.
  c.UpsertAssignedPod(Pod("d", "a", "web", "n1"));
  ASSERT_TRUE(c.ChangedSince(seq, &names));
  EXPECT_THAT(names, ElementsAre());
  EXPECT_EQ(key(), assumed);
  // With more labels, the watch's copy holds them in another map order
  // than the queue's copy did: still the same pod.
  objects::PodInfo labelled = Pod("d", "m", "web", "");
  for (int i = 0; i < 16; ++i) {
    (*labelled.pod.mutable_labels())[absl::StrCat("k", i)] = "v";
  }
  objects::PodInfo watched = Pod("d", "m", "web", "n1");
  for (int i = 15; i >= 0; --i) {
    (*watched.pod.mutable_labels())[absl::StrCat("k", i)] = "v";
  }
  ASSERT_TRUE(c.AssumePod(labelled, "n1"));
  const std::string with_m = key();
  seq = c.ChangeSeq();
  c.UpsertAssignedPod(watched);
  ASSERT_TRUE(c.ChangedSince(seq, &names));
  EXPECT_THAT(names, ElementsAre());
  EXPECT_EQ(key(), with_m);
  c.RemovePod("d/m");
  // Bound with the node's zone label added (PodTopologyLabelsAdmission):
  // the node offers what it did (same key), but counts the label now.
  ASSERT_TRUE(c.AssumePod(Pod("d", "z", "web", ""), "n1"));
  const std::string with_z = key();
  objects::PodInfo zoned = Pod("d", "z", "web", "n1");
  (*zoned.pod.mutable_labels())["topology.kubernetes.io/zone"] = "a";
  seq = c.ChangeSeq();
  c.UpsertAssignedPod(zoned);
  names.clear();
  ASSERT_TRUE(c.ChangedSince(seq, &names));
  EXPECT_THAT(names, ElementsAre("n1"));
  EXPECT_EQ(key(), with_z);
  std::vector<std::string> counting;
  c.NodesCounting("d", "topology.kubernetes.io/zone", "a", &counting);
  EXPECT_THAT(counting, ElementsAre("n1"));
  EXPECT_EQ(Count(Candidates(c, incoming)["n1"]), 2);  // d/a and d/z
  c.RemovePod("d/z");
  counting.clear();
  c.NodesCounting("d", "topology.kubernetes.io/zone", "a", &counting);
  EXPECT_THAT(counting, ElementsAre());
  c.ForgetPod("d/a");  // bound now: no longer assumed, so it stays
  EXPECT_EQ(Candidates(c, incoming)["n1"].pod_count(), 1);
  // Bound with other labels than assumed: the node changes.
  ASSERT_TRUE(c.AssumePod(Pod("d", "b", "web", ""), "n1"));
  seq = c.ChangeSeq();
  c.UpsertAssignedPod(Pod("d", "b", "db", "n1"));
  names.clear();
  ASSERT_TRUE(c.ChangedSince(seq, &names));
  EXPECT_THAT(names, ElementsAre("n1"));
  EXPECT_EQ(Count(Candidates(c, incoming)["n1"]), 1);  // only d/a is web
  c.RemovePod("d/a");
  c.RemovePod("d/b");
  EXPECT_EQ(Candidates(c, incoming)["n1"].pod_count(), 0);
}

// Batching over a share of the nodes keeps verdicts by position: a node's
// position is its place in the candidate order (AppendCandidates'), names
// at positions read it back, and the nodes counting a label value are
// those running countable pods of that namespace and value.
TEST(CacheTest, PositionsFollowTheCandidateOrder) {
  Cache c;
  for (const char* n : {"n1", "n2", "n3"}) c.UpsertNode(Node(n));
  std::vector<std::string> order;
  std::string out;
  c.AppendCandidates(Pod("d", "x", "", ""), {}, 0, 3, false, 1, &out, &order);
  ASSERT_EQ(order.size(), 3u);
  std::vector<int32_t> at;
  EXPECT_EQ(c.PositionsOf({order[2], "gone", order[0]}, &at), 3u);
  EXPECT_THAT(at, ElementsAre(2, -1, 0));
  EXPECT_THAT(c.NamesAt({1, 2, 0}), ElementsAre(order[1], order[2], order[0]));

  c.UpsertAssignedPod(Pod("d", "w1", "web", "n1"));
  c.UpsertAssignedPod(Pod("d", "w2", "web", "n3"));
  c.UpsertAssignedPod(Pod("other", "w3", "web", "n2"));  // other namespace
  c.UpsertAssignedPod(Pod("d", "b1", "db", "n2"));       // other value
  std::vector<std::string> web;
  c.NodesCounting("d", "app", "web", &web);
  std::sort(web.begin(), web.end());
  EXPECT_THAT(web, ElementsAre("n1", "n3"));
  c.RemovePod("d/w2");
  web.clear();
  c.NodesCounting("d", "app", "web", &web);
  EXPECT_THAT(web, ElementsAre("n1"));
  web.clear();
  c.NodesCounting("d", "app", "none", &web);
  EXPECT_TRUE(web.empty());
}

// By key, a candidate is its content key and the cycle's parts; whole with
// its key, the same node as whole plus the key, which is its content's.
TEST(CacheTest, CandidatesGoByContentKey) {
  Cache c;
  // Every part of the key (content keys are built from parts: the Node
  // object's, then the aggregates around declared_features).
  pb::Node n1 = Node("n1");
  for (int i = 0; i < 8; ++i) {
    (*n1.mutable_labels())[absl::StrCat("zone", i)] = "a";
  }
  n1.add_taints()->set_key("dedicated");
  n1.set_unschedulable(true);
  n1.add_declared_features("InPlacePodVerticalScaling");
  n1.set_pod_count(99);  // not the node object's: the cache counts
  c.UpsertNode(n1);
  objects::PodInfo ported = Pod("d", "a", "web", "n1");
  ported.host_ports.emplace_back().set_port(80);
  c.UpsertAssignedPod(ported);
  const objects::PodInfo incoming = Pod("d", "in", "web", "");
  for (bool labels : {false, true}) {
    auto build = [&](NodeForm form) {
      std::string out;
      c.AppendCandidates(incoming, {"app"}, 0, 1, labels,
                         pb::EvaluateRequest::kNodesFieldNumber, &out, nullptr,
                         nullptr, form);
      pb::EvaluateRequest req;
      EXPECT_TRUE(req.ParseFromString(out));
      return req.nodes(0);
    };
    const pb::Node whole = build(NodeForm::kFull);
    const pb::Node keyed = build(NodeForm::kFullWithKey);
    const pb::Node ref = build(NodeForm::kKey);
    EXPECT_TRUE(whole.content_key().empty());
    EXPECT_EQ(keyed.content_key(), model::NodeContentKey(whole));
    EXPECT_EQ(ref.content_key(), keyed.content_key());
    EXPECT_TRUE(ref.name().empty());
    EXPECT_EQ(Count(ref), labels ? 2 : 1);  // the cycle's parts still come
    EXPECT_EQ(whole.labels_size(), labels ? 8 : 0);
    EXPECT_EQ(whole.pod_count(), labels ? 2 : 1);
    EXPECT_EQ(whole.used_ports_size(), 1);
    EXPECT_EQ(whole.declared_features_size(), 1);
    // Another pod there: another key.
    c.UpsertAssignedPod(Pod("d", labels ? "c" : "b", "web", "n1"));
    EXPECT_NE(build(NodeForm::kKey).content_key(), ref.content_key());
  }
}

// Sent by key to a replica, a node goes whole the first time and after it
// changed, and by its key alone once that replica was sent its key.
TEST(CacheTest, NodesGoWholeToAReplicaUntilItWasSentTheirKey) {
  Cache c;
  c.UpsertNode(Node("n1"));
  const objects::PodInfo incoming = Pod("d", "in", "web", "");
  for (bool labels : {false, true}) {
    auto to = [&](int replica) {
      std::string out;
      c.AppendNamed(incoming, {"app"}, {"n1"}, labels,
                    pb::EvaluateRequest::kNodesFieldNumber, &out, nullptr,
                    nullptr, NodeForm::kKey, nullptr, replica);
      pb::EvaluateRequest req;
      EXPECT_TRUE(req.ParseFromString(out));
      return req.nodes(0).name().empty() ? "key" : "whole";
    };
    EXPECT_STREQ(to(0), "whole");
    EXPECT_STREQ(to(0), "key");
    EXPECT_STREQ(to(1), "whole");
    EXPECT_STREQ(to(1), "key");
    c.UpsertAssignedPod(Pod("d", labels ? "b" : "a", "web", "n1"));
    EXPECT_STREQ(to(0), "whole");  // a new key
    EXPECT_STREQ(to(0), "key");
  }
}

// A node as a pod that yields to the pods nominated there sees it is a
// content of its own: it goes whole to a replica, then by its key while
// the same pods yield, and whole again when they change.
TEST(CacheTest, NodesWithNominatedPodsGoByTheirOwnKey) {
  Cache c;
  c.UpsertNode(Node("n1"));
  c.UpsertAssignedPod(Pod("d", "a", "web", "n1"));
  objects::PodInfo nominated = Pod("d", "big", "", "", 1000);
  nominated.priority = 10;
  c.Nominate(nominated, "n1");
  for (bool labels : {false, true}) {
    SCOPED_TRACE(labels);
    auto to = [&](const objects::PodInfo& incoming) {
      std::string out;
      c.AppendNamed(incoming, {"app"}, {"n1"}, labels,
                    pb::EvaluateRequest::kNodesFieldNumber, &out, nullptr,
                    nullptr, NodeForm::kKey, nullptr, 0);
      pb::EvaluateRequest req;
      EXPECT_TRUE(req.ParseFromString(out));
      return req.nodes(0);
    };
    const objects::PodInfo low = Pod("d", "low", "web", "");  // priority 0
    const pb::Node whole = to(low);
    EXPECT_EQ(whole.pod_count(), 2);  // its pod and the nominated one
    EXPECT_EQ(whole.requested().milli_cpu(), 1100);
    EXPECT_EQ(whole.content_key(), model::NodeContentKey(whole));
    const pb::Node ref = to(low);
    EXPECT_TRUE(ref.name().empty());
    EXPECT_EQ(ref.content_key(), whole.content_key());
    // A pod that does not yield sees the node's own content, another key.
    objects::PodInfo high = low;
    high.priority = 20;
    EXPECT_NE(to(high).content_key(), whole.content_key());
    // Another nominated pod: another content, whole again.
    objects::PodInfo more = Pod("d", "more", "", "", 50);
    more.priority = 10;
    EXPECT_EQ(to(low).content_key(), whole.content_key());  // then:
    c.Nominate(more, "n1");
    const pb::Node grown = to(low);
    EXPECT_EQ(grown.pod_count(), 3);
    EXPECT_FALSE(grown.name().empty());
    EXPECT_NE(grown.content_key(), whole.content_key());
    EXPECT_TRUE(to(low).name().empty());
    c.DropNomination("d/more");
    // The nominated pod itself yields to the others only: here, none,
    // while another pod of its priority yields to it.
    objects::PodInfo peer = Pod("d", "peer", "web", "");
    peer.priority = nominated.priority;
    EXPECT_EQ(to(peer).content_key(), whole.content_key());
    const std::string self_sees = to(nominated).content_key();  // then:
    EXPECT_EQ(self_sees, to(high).content_key());
    const pb::Node back = to(low);  // the first form again, not a stale one
    EXPECT_EQ(back.content_key(), whole.content_key());
    // The node's own pods change: the form a yielding pod sees does too.
    c.UpsertAssignedPod(Pod("d", "own", "web", "n1"));
    const pb::Node own = to(low);
    EXPECT_FALSE(own.name().empty());
    EXPECT_EQ(own.pod_count(), whole.pod_count() + 1);
    c.RemovePod("d/own");
  }
}

TEST(CacheTest, PdbsCoveringMatchSelectorsInThePodsNamespace) {
  Cache c;
  c.UpsertPdb(Pdb("ns", "web-b", "web"));
  c.UpsertPdb(Pdb("ns", "web-a", "web"));
  c.UpsertPdb(Pdb("ns", "db", "db"));
  c.UpsertPdb(Pdb("other", "web", "web"));  // other namespace
  auto expr = std::make_shared<objects::PdbInfo>(*Pdb("ns", "not-canary", ""));
  pb::LabelSelectorRequirement* r = expr->selector.add_match_expressions();
  r->set_key("track");
  r->set_operator_("NotIn");
  r->add_values("canary");
  c.UpsertPdb(expr);
  EXPECT_EQ(c.PdbCount(), 5u);

  // Sorted by name.
  EXPECT_THAT(Names(c.PdbsCovering(Pod("ns", "w", "web", "a"))),
              ElementsAre("not-canary", "web-a", "web-b"));
  objects::PodInfo canary = Pod("ns", "w", "web", "a");
  (*canary.pod.mutable_labels())["track"] = "canary";
  EXPECT_THAT(Names(c.PdbsCovering(canary)), ElementsAre("web-a", "web-b"));
  EXPECT_THAT(Names(c.PdbsCovering(Pod("other", "w", "web", "a"))),
              ElementsAre("web"));
  EXPECT_THAT(Names(c.PdbsCovering(Pod("none", "w", "web", "a"))),
              ElementsAre());
  // A pod without labels is protected by none, even by a selector it would
  // match (upstream skips such pods).
  EXPECT_THAT(Names(c.PdbsCovering(Pod("ns", "w", "", "a"))), ElementsAre());

  // The budget as decoded travels: what preemption counts with.
  auto covering = c.PdbsCovering(Pod("other", "w", "web", "a"));
  ASSERT_EQ(covering.size(), 1u);
  EXPECT_EQ(covering[0]->disruptions_allowed, 1);

  // Updates replace, deletes remove.
  c.UpsertPdb(Pdb("ns", "web-a", "db", 0));
  EXPECT_THAT(Names(c.PdbsCovering(Pod("ns", "w", "db", "a"))),
              ElementsAre("db", "not-canary", "web-a"));
  c.RemovePdb("ns", "web-b");
  c.RemovePdb("ns", "missing");
  c.RemovePdb("missing", "web");
  EXPECT_THAT(Names(c.PdbsCovering(Pod("ns", "w", "web", "a"))),
              ElementsAre("not-canary"));
  EXPECT_EQ(c.PdbCount(), 4u);
  c.RemovePdb("other", "web");
  EXPECT_THAT(Names(c.PdbsCovering(Pod("other", "w", "web", "a"))),
              ElementsAre());
  EXPECT_EQ(c.PdbCount(), 3u);
}

TEST(CacheTest, PdbsWithUnsetEmptyOrMalformedSelectorsProtectNoPod) {
  Cache c;
  auto unset = std::make_shared<objects::PdbInfo>(*Pdb("ns", "unset", ""));
  unset->has_selector = false;
  c.UpsertPdb(unset);
  c.UpsertPdb(Pdb("ns", "empty", ""));  // {}: Everything, which is Empty()
  auto malformed =
      std::make_shared<objects::PdbInfo>(*Pdb("ns", "malformed", "web"));
  pb::LabelSelectorRequirement* r = malformed->selector.add_match_expressions();
  r->set_key("tier");
  r->set_operator_("Exists");  // with a value: an error upstream
  r->add_values("front");
  c.UpsertPdb(malformed);
  auto bad_key = std::make_shared<objects::PdbInfo>(*Pdb("ns", "bad-key", ""));
  (*bad_key->selector.mutable_match_labels())["not a key"] = "web";
  c.UpsertPdb(bad_key);
  EXPECT_EQ(c.PdbCount(), 4u);
  objects::PodInfo pod = Pod("ns", "w", "web", "a");
  (*pod.pod.mutable_labels())["tier"] = "front";
  EXPECT_THAT(Names(c.PdbsCovering(pod)), ElementsAre());
  // A budget that becomes usable protects the pod from then on.
  c.UpsertPdb(Pdb("ns", "empty", "web"));
  EXPECT_THAT(Names(c.PdbsCovering(pod)), ElementsAre("empty"));
}

// Upstream's addGENominatedPods: a pod nominated to a node counts there
// (requests, host ports, one pod) for pods of lower or equal priority, not
// for higher ones nor for itself; scoring's non-zero requests stay as they
// are.
TEST(CacheTest, NominatedPodsCountForPodsThatYieldToThem) {
  Cache c;
  c.UpsertNode(Node("a"));
  c.UpsertNode(Node("b"));
  c.UpsertAssignedPod(Pod("ns", "w1", "", "a", 300));
  objects::PodInfo nominated = Pod("ns", "big", "", "", 1000);
  nominated.priority = 10;
  pb::HostPort& port = nominated.host_ports.emplace_back();
  port.set_port(80);
  port.set_protocol("TCP");
  c.Nominate(nominated, "a");
  EXPECT_EQ(c.NominatedNode("ns/big"), "a");

  auto incoming = [](int32_t priority, const std::string& name = "x") {
    objects::PodInfo p = Pod("ns", name, "", "");
    p.priority = priority;
    return p;
  };
  for (bool with_labels : {false, true}) {
    SCOPED_TRACE(with_labels);
    auto a = [&](const objects::PodInfo& p) {
      google::protobuf::RepeatedPtrField<pb::Node> out;
      testing::FillCandidates(c, p, {}, 0, 2, &out, with_labels);
      EXPECT_EQ(out.size(), 2);
      EXPECT_EQ(out[1].name(), "b");
      EXPECT_EQ(out[1].pod_count(), 0);  // other nodes see nothing
      return out[0];
    };
    for (int32_t priority : {5, 10}) {
      const pb::Node seen = a(incoming(priority));
      EXPECT_EQ(seen.requested().milli_cpu(), 1300);
      EXPECT_EQ(seen.non_zero_requested().milli_cpu(), 300);
      EXPECT_EQ(seen.pod_count(), 2);
      ASSERT_EQ(seen.used_ports_size(), 1);
      EXPECT_EQ(seen.used_ports(0).port(), 80);
    }
    for (const objects::PodInfo& p : {incoming(11), nominated}) {
      const pb::Node seen = a(p);
      EXPECT_EQ(seen.requested().milli_cpu(), 300);
      EXPECT_EQ(seen.pod_count(), 1);
      EXPECT_EQ(seen.used_ports_size(), 0);
    }
  }
  // The same through the named path (a cycle's last call, preemption).
  std::string wire;
  std::vector<std::string> names;
  c.AppendNamed(incoming(0), {}, {"a"}, false, 4, &wire, &names, nullptr);
  pb::FilterRequest named;
  ASSERT_TRUE(named.ParseFromString(wire));
  EXPECT_EQ(named.nodes(0).requested().milli_cpu(), 1300);
  EXPECT_THAT(names, ElementsAre("a"));

  ASSERT_EQ(c.NominatedPodsOn("a").size(), 1u);
  EXPECT_EQ(c.NominatedPodsOn("a")[0].priority, 10);
  EXPECT_TRUE(c.NominatedPodsOn("b").empty());
  c.Nominate(nominated, "b");  // nominated elsewhere
  EXPECT_TRUE(c.NominatedPodsOn("a").empty());
  EXPECT_EQ(Candidates(c, incoming(0))["b"].requested().milli_cpu(), 1000);
  EXPECT_EQ(Candidates(c, incoming(0))["a"].requested().milli_cpu(), 300);
  c.Nominate(nominated, "");
  EXPECT_EQ(c.NominatedNode("ns/big"), "");
  EXPECT_EQ(Candidates(c, incoming(0))["b"].requested().milli_cpu(), 0);
}

// Nominations end when the pod binds (assumed or seen assigned), goes, or
// the API clears them; one made in memory outlives updates that show none
// yet (upstream's UpdateNominatedPod).
TEST(CacheTest, NominationsFollowTheApiAndEndWithThePod) {
  Cache c;
  c.UpsertNode(Node("a"));
  c.UpsertNode(Node("b"));
  objects::PodInfo p = Pod("ns", "p", "", "", 500);
  c.UpdatePendingPod(p);
  EXPECT_EQ(c.NominatedNode("ns/p"), "");
  p.nominated_node_name = "a";  // set by another scheduler, or by us
  c.UpdatePendingPod(p);
  EXPECT_EQ(c.NominatedNode("ns/p"), "a");
  p.nominated_node_name = "";  // cleared in the API
  c.UpdatePendingPod(p);
  EXPECT_EQ(c.NominatedNode("ns/p"), "");

  c.Nominate(p, "b");  // ours, the status patch not seen yet
  c.UpdatePendingPod(p);
  EXPECT_EQ(c.NominatedNode("ns/p"), "b");
  p.requests.set_milli_cpu(700);  // the pod as it is now counts
  c.UpdatePendingPod(p);
  EXPECT_EQ(Candidates(c, Pod("ns", "x", "", ""))["b"].requested().milli_cpu(),
            700);
  p.nominated_node_name = "b";  // the patch arrives
  c.UpdatePendingPod(p);
  EXPECT_EQ(c.NominatedNode("ns/p"), "b");

  ASSERT_TRUE(c.AssumePod(p, "a"));
  EXPECT_EQ(c.NominatedNode("ns/p"), "");
  EXPECT_EQ(Candidates(c, Pod("ns", "x", "", ""))["b"].pod_count(), 0);
  c.ForgetPod("ns/p");
  c.UpdatePendingPod(p);
  EXPECT_EQ(c.NominatedNode("ns/p"), "b");
  objects::PodInfo bound = p;
  bound.node_name = "a";
  c.UpsertAssignedPod(bound);
  EXPECT_EQ(c.NominatedNode("ns/p"), "");
  c.RemovePod("ns/p");
  c.UpdatePendingPod(p);
  EXPECT_EQ(c.NominatedNode("ns/p"), "b");
  c.RemovePod("ns/p");  // deleted while pending
  EXPECT_EQ(c.NominatedNode("ns/p"), "");
  EXPECT_TRUE(c.NominatedPodsOn("b").empty());
}

// Nodes a, b and c for the preemption tests: on a, pods of priority 1
// ("low", with a port and a start time), 100 and 50, and a pod of priority
// 60 nominated; on b, a pod being deleted by preemption and an assumed one;
// c empty. True when the assumption took.
bool FillForPreemption(Cache& c) {
  for (const char* n : {"a", "b", "c"}) c.UpsertNode(Node(n));
  objects::PodInfo low = Pod("ns", "low", "web", "a", 300);
  low.priority = 1;
  low.start_time = absl::FromUnixSeconds(1000);
  low.pod.set_name("low");
  pb::HostPort& port = low.host_ports.emplace_back();
  port.set_port(8080);
  port.set_protocol("TCP");
  low.non_zero.set_memory(200 << 20);
  c.UpsertAssignedPod(low);
  objects::PodInfo high = Pod("ns", "high", "web", "a", 200);
  high.priority = 100;
  c.UpsertAssignedPod(high);
  objects::PodInfo equal = Pod("ns", "equal", "web", "a", 100);
  equal.priority = 50;
  c.UpsertAssignedPod(equal);
  objects::PodInfo leaving = Pod("ns", "leaving", "", "b", 100);
  leaving.deleting = true;
  leaving.preempted_by_scheduler = true;
  c.UpsertAssignedPod(leaving);
  objects::PodInfo nominated = Pod("ns", "nominated", "", "", 1000);
  nominated.priority = 60;
  c.Nominate(nominated, "a");
  return c.AssumePod(Pod("ns", "assumed", "", "", 100), "b");
}

objects::PodInfo Preemptor() {
  objects::PodInfo preemptor = Pod("ns", "preemptor", "web", "", 2000);
  preemptor.priority = 50;
  return preemptor;
}

// PostFilter's view: each node as Evaluate gets it for the preemptor, with
// its pods of lower priority as the cache counted them, in the order asked.
TEST(CacheTest, PreemptionNodesCarryTheirLowerPriorityPods) {
  Cache c;
  ASSERT_TRUE(FillForPreemption(c));
  const objects::PodInfo preemptor = Preemptor();
  pb::PlanResponse plan;  // one query: each node's own pods, any labels
  pb::PodMatcher* m = plan.add_queries()->add_all_of();
  m->add_namespaces("ns");
  m->mutable_selector();
  auto prepared = c.Prepare(preemptor.pod, plan);
  google::protobuf::RepeatedPtrField<pb::PreemptionNode> out;
  ASSERT_EQ(testing::FillPreemptionNodes(c, preemptor, preemptor.pod, {"app"},
                                         {"a", "gone", "b", "c"}, false, plan,
                                         prepared.get(), 100, &out),
            3u);
  ASSERT_EQ(out.size(), 3);
  const pb::PreemptionNode& a = out[0];
  EXPECT_EQ(a.node().name(), "a");
  EXPECT_EQ(a.node().requested().milli_cpu(), 300 + 200 + 100 + 1000);
  EXPECT_EQ(a.node().pod_count(), 4);
  EXPECT_EQ(Count(a.node()), 3);
  EXPECT_THAT(a.node().query_counts(), ElementsAre(3));
  ASSERT_EQ(a.pods_size(), 1);
  const pb::VictimPod& v = a.pods(0);
  EXPECT_EQ(v.namespace_(), "ns");
  EXPECT_EQ(v.name(), "low");
  EXPECT_EQ(v.uid(), "low-uid");
  EXPECT_EQ(v.priority(), 1);
  EXPECT_EQ(v.requests().milli_cpu(), 300);
  EXPECT_EQ(v.non_zero_requests().memory(), 200 << 20);
  ASSERT_EQ(v.ports_size(), 1);
  EXPECT_EQ(v.ports(0).port(), 8080);
  // Labels only where a budget could read them.
  EXPECT_TRUE(v.labels().empty());
  EXPECT_EQ(v.start_time_unix_nanos(), int64_t{1000} * 1000000000);
  EXPECT_FALSE(v.terminating());
  EXPECT_THAT(v.matched_queries(), ElementsAre(0));
  EXPECT_EQ(out[1].node().name(), "b");
  ASSERT_EQ(out[1].pods_size(), 2);  // an assumed pod is a victim too
  EXPECT_EQ(out[1].pods(0).name(), "leaving");
  EXPECT_TRUE(out[1].pods(0).terminating());
  EXPECT_FALSE(out[1].pods(1).has_start_time_unix_nanos());
  EXPECT_EQ(out[2].node().name(), "c");
  EXPECT_EQ(out[2].pods_size(), 0);
  EXPECT_TRUE(c.DisruptionBudgetsIn({"ns"}).empty());
}

// Bounded by the number of victims: b's two would pass 2; the first node
// always goes.
TEST(CacheTest, PreemptionNodesStopAtTheVictimBound) {
  Cache c;
  ASSERT_TRUE(FillForPreemption(c));
  const objects::PodInfo preemptor = Preemptor();
  google::protobuf::RepeatedPtrField<pb::PreemptionNode> out;
  for (const auto& [max, want] :
       std::vector<std::pair<size_t, int>>{{2, 1}, {0, 1}, {3, 3}}) {
    out.Clear();
    testing::FillPreemptionNodes(c, preemptor, preemptor.pod, {},
                                 {"a", "b", "c"}, false, {}, nullptr, max,
                                 &out);
    EXPECT_EQ(out.size(), want) << max;
  }
}

// The nominated node's lower-priority pods: only terminating (by
// preemption) and priority are read of them.
TEST(CacheTest, LowerPriorityPodsOfTheNominatedNode) {
  Cache c;
  ASSERT_TRUE(FillForPreemption(c));
  objects::PodInfo deleted = Pod("ns", "deleted", "", "b", 100);
  deleted.deleting = true;  // by someone else than a scheduler
  c.UpsertAssignedPod(deleted);
  std::vector<pb::VictimPod> lower = c.LowerPriorityPods("b", 50);
  ASSERT_EQ(lower.size(), 3u);
  EXPECT_TRUE(lower[0].terminating());
  EXPECT_FALSE(lower[1].terminating());
  EXPECT_FALSE(lower[2].terminating());
  EXPECT_TRUE(c.LowerPriorityPods("b", 0).empty());
  EXPECT_TRUE(c.LowerPriorityPods("gone", 50).empty());
  EXPECT_THAT(c.NodeNames(), ElementsAre("a", "b", "c"));
}

// A node's pods as preemption reads them follow the pods' updates, moves
// and deletions (and every other pod's: the entries are kept by address).
TEST(CacheTest, LowerPriorityPodsFollowThePods) {
  Cache c;
  c.UpsertNode(Node("a"));
  c.UpsertNode(Node("b"));
  auto names = [&c](const std::string& node) {
    std::vector<std::string> out;
    for (const pb::VictimPod& v : c.LowerPriorityPods(node, 100)) {
      out.push_back(absl::StrCat(v.name(), ":", v.priority()));
    }
    return out;
  };
  for (int i = 0; i < 40; ++i) {
    objects::PodInfo p = Pod("ns", absl::StrCat("p", i), "", i % 2 ? "a" : "b");
    p.priority = i;
    c.UpsertAssignedPod(p);
  }
  for (int i = 0; i < 40; i += 4) c.RemovePod(absl::StrCat("ns/p", i));
  objects::PodInfo moved = Pod("ns", "p1", "", "b");
  moved.priority = 7;
  c.UpsertAssignedPod(moved);
  objects::PodInfo high = Pod("ns", "p3", "", "a");
  high.priority = 100;
  c.UpsertAssignedPod(high);
  EXPECT_THAT(
      names("a"),
      ElementsAre("p5:5", "p7:7", "p9:9", "p11:11", "p13:13", "p15:15",
                  "p17:17", "p19:19", "p21:21", "p23:23", "p25:25", "p27:27",
                  "p29:29", "p31:31", "p33:33", "p35:35", "p37:37", "p39:39"));
  EXPECT_THAT(names("b"), ElementsAre("p2:2", "p6:6", "p10:10", "p14:14",
                                      "p18:18", "p22:22", "p26:26", "p30:30",
                                      "p34:34", "p38:38", "p1:7"));
}

// A victim's labels go only where a budget of its namespace selects pods:
// the scorer reads them against those budgets alone.
TEST(CacheTest, VictimLabelsGoWhereABudgetSelects) {
  Cache c;
  ASSERT_TRUE(FillForPreemption(c));
  const objects::PodInfo preemptor = Preemptor();
  google::protobuf::RepeatedPtrField<pb::PreemptionNode> out;
  auto labels_of_low = [&] {
    out.Clear();
    testing::FillPreemptionNodes(c, preemptor, preemptor.pod, {}, {"a"}, false,
                                 {}, nullptr, 100, &out);
    return out.size() == 1 && out[0].pods_size() == 1
               ? out[0].pods(0).labels()
               : google::protobuf::Map<std::string, std::string>();
  };
  EXPECT_TRUE(labels_of_low().empty());
  c.UpsertPdb(Pdb("other", "db", "db"));
  EXPECT_TRUE(labels_of_low().empty());
  c.UpsertPdb(Pdb("ns", "db", "db"));
  const auto labels = labels_of_low();
  ASSERT_TRUE(labels.contains("app"));
  EXPECT_EQ(labels.at("app"), "web");
}

TEST(CacheTest, DisruptionBudgetsInTheVictimsNamespacesGoToPreempt) {
  Cache c;
  c.UpsertPdb(Pdb("ns", "web", "web", 2));
  c.UpsertPdb(Pdb("ns", "db", "db", 0));
  c.UpsertPdb(Pdb("other", "web", "web"));
  auto empty = std::make_shared<objects::PdbInfo>(*Pdb("ns", "all", ""));
  c.UpsertPdb(empty);  // an empty selector protects no pod: not sent
  auto disrupted = std::make_shared<objects::PdbInfo>(*Pdb("third", "q", "q"));
  disrupted->disrupted_pods = {"q-2", "q-1"};
  c.UpsertPdb(disrupted);

  std::vector<pb::DisruptionBudget> got =
      c.DisruptionBudgetsIn({"ns", "third", "none"});
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].namespace_(), "ns");
  EXPECT_EQ(got[0].name(), "db");
  EXPECT_EQ(got[0].disruptions_allowed(), 0);
  EXPECT_EQ(got[0].selector().match_labels().at("app"), "db");
  EXPECT_EQ(got[1].name(), "web");
  EXPECT_EQ(got[1].disruptions_allowed(), 2);
  EXPECT_EQ(got[2].name(), "q");
  EXPECT_THAT(got[2].disrupted_pods(), ElementsAre("q-1", "q-2"));
  EXPECT_TRUE(c.DisruptionBudgetsIn({}).empty());
}

}  // namespace
}  // namespace kscore::cache

namespace kscore::cache {
namespace {

objects::PodInfo WithVolumes(objects::PodInfo p, const std::string& claim,
                             const std::string& disk) {
  if (!claim.empty()) {
    pb::VolumeClaim* v = p.pod.add_volume_claims();
    v->set_volume("data");
    v->set_claim_name(claim);
  }
  if (!disk.empty()) {
    pb::InlineDisk* d = p.pod.add_inline_disks();
    d->set_kind(pb::DISK_KIND_AWS_EBS);
    d->set_id(disk);
  }
  return p;
}

// VolumeRestrictions' data: the volumes naming each claim in the pod's
// message, and a cycle part of the node's disks the pod may conflict with.
TEST(CacheTest, ClaimRefsAndDisksFollowPods) {
  Cache c;
  c.UpsertNode(Node("a"));
  c.UpsertNode(Node("b"));
  auto claim = std::make_shared<objects::ClaimInfo>();
  claim->namespace_ = "ns";
  claim->name = "c";
  claim->state.set_name("c");
  claim->state.set_found(true);
  c.volumes().UpsertClaim(claim);
  c.UpsertAssignedPod(WithVolumes(Pod("ns", "u1", "", "a"), "c", "vol"));
  c.UpsertAssignedPod(WithVolumes(Pod("other", "u2", "", "b"), "c", "x"));
  const objects::PodInfo incoming =
      WithVolumes(Pod("ns", "in", "", ""), "c", "vol");
  pb::Pod pod = c.PodFor(incoming, {pb::POD_DATA_VOLUMES});
  ASSERT_EQ(pod.volumes().claims_size(), 1);
  EXPECT_EQ(pod.volumes().claims(0).pod_refs(), 1);  // not other/c
  auto m = Candidates(c, incoming);
  ASSERT_EQ(m["a"].disks_size(), 1);
  EXPECT_EQ(m["a"].disks(0).id(), "vol");
  EXPECT_EQ(m["b"].disks_size(), 0);  // another disk
  c.RemovePod("ns/u1");
  EXPECT_EQ(
      c.PodFor(incoming, {pb::POD_DATA_VOLUMES}).volumes().claims(0).pod_refs(),
      0);
  EXPECT_EQ(Candidates(c, incoming)["a"].disks_size(), 0);
}

}  // namespace
}  // namespace kscore::cache
