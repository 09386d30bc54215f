#include "scorer/framework/request_bounds.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "scorer/testing/wrappers.h"

namespace kscore::framework {
namespace {

using ::kscore::testing::MakeNode;
using ::kscore::testing::MakePod;
using ::testing::HasSubstr;

constexpr int64_t kLimit = int64_t{4} << 30;

// A pod of `n` tolerations (each ~40 bytes on the wire).
pb::Pod Tolerating(int n) {
  pb::Pod pod = MakePod().Name("p").Obj();
  for (int i = 0; i < n; ++i) {
    pb::Toleration* t = pod.add_tolerations();
    t->set_key(absl::StrCat("example.com/taint-", i));
    t->set_operator_("Exists");
  }
  return pod;
}

TEST(RequestBoundsTest, NodesWorkIsThePodReadForEachNodeAndTaint) {
  const pb::Pod pod = Tolerating(10);
  const int64_t pod_bytes = static_cast<int64_t>(pod.ByteSizeLong());
  pb::Node plain = MakeNode().Name("a").Obj();
  pb::Node tainted = MakeNode().Name("b").Obj();
  for (int i = 0; i < 3; ++i) tainted.add_taints()->set_key("k");
  struct Case {
    std::string name;
    std::vector<const pb::Node*> nodes;
    int64_t passes;
  };
  const Case cases[] = {
      {"no node", {}, 0},
      {"one node", {&plain}, 1},
      {"a node with 3 taints", {&tainted}, 4},
      {"both", {&plain, &tainted}, 5},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(NodesWork(pod, c.nodes), pod_bytes * c.passes);
  }
}

// 100000 tolerations (4 MB) against 5000 nodes: 2 * 10^10 bytes read.
TEST(RequestBoundsTest, ManyTolerationsOnManyNodesAreRefused) {
  const pb::Pod pod = Tolerating(100000);
  std::vector<pb::Node> nodes(5000);
  std::vector<const pb::Node*> ptrs;
  for (pb::Node& n : nodes) ptrs.push_back(&n);
  absl::Status s =
      CheckWork(NodesWork(pod, ptrs), kLimit, "nodes", "the pod for each node",
                "--max-request-work", "send fewer nodes per call");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("nodes: the call would read about"));
  EXPECT_THAT(s.message(), HasSubstr("--max-request-work"));
  // A real pod on the largest batch passes.
  EXPECT_TRUE(CheckWork(NodesWork(Tolerating(20), ptrs), kLimit, "nodes", "",
                        "--max-request-work", "")
                  .ok());
}

pb::PreemptRequest Preemption(int victims, int pdbs, int disrupted) {
  pb::PreemptRequest req;
  *req.mutable_pod() = MakePod().Name("p").Obj();
  req.mutable_pod()->set_priority(10);
  pb::PreemptionNode* n = req.add_nodes();
  *n->mutable_node() = MakeNode().Name("n").Obj();
  for (int i = 0; i < victims; ++i) {
    pb::VictimPod* v = n->add_pods();
    v->set_name(absl::StrCat("v", i));
    (*v->mutable_labels())["app"] = "web";
  }
  for (int k = 0; k < pdbs; ++k) {
    pb::DisruptionBudget* b = req.add_pdbs();
    (*b->mutable_selector()->mutable_match_labels())["app"] = "web";
    for (int j = 0; j < disrupted; ++j) {
      b->add_disrupted_pods(absl::StrCat("pod-", j));
    }
  }
  return req;
}

TEST(RequestBoundsTest, PreemptWorkGrowsWithVictimsTimesBudgets) {
  const pb::PreemptRequest one = Preemption(1, 1, 1);
  const int64_t per_victim = static_cast<int64_t>(one.pod().ByteSizeLong() +
                                                  one.cluster().ByteSizeLong() +
                                                  one.pdbs(0).ByteSizeLong());
  EXPECT_EQ(PreemptWork(one), per_victim);
  EXPECT_EQ(PreemptWork(Preemption(10, 1, 1)), 10 * per_victim);
  // Host ports: each victim's against each used port of its node.
  pb::PreemptRequest ports = Preemption(2, 0, 0);
  for (int i = 0; i < 3; ++i) {
    ports.mutable_nodes(0)->mutable_node()->add_used_ports()->set_port(80 + i);
  }
  for (int i = 0; i < 2; ++i) {
    ports.mutable_nodes(0)->mutable_pods(i)->add_ports()->set_port(80 + i);
  }
  EXPECT_EQ(PreemptWork(ports),
            2 * static_cast<int64_t>(ports.pod().ByteSizeLong()) + 2 * 4);
  // 50000 victims, each checked against a budget listing 50000 disrupted
  // pods (a request of ~1.5 MB): ~3 * 10^10 bytes read.
  absl::Status s = CheckWork(PreemptWork(Preemption(50000, 1, 50000)), kLimit,
                             "nodes[].pods", "victims", "--max-request-work",
                             "send fewer nodes or victims");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("nodes[].pods: "));
}

TEST(RequestBoundsTest, HintWorkIsTheQueriesReadForEachTaintAndPort) {
  pb::QueueingHintRequest req;
  for (int i = 0; i < 2; ++i) *req.add_queries()->mutable_pod() = Tolerating(1);
  const int64_t pods = 2 * static_cast<int64_t>(req.queries(0).ByteSizeLong() -
                                                2);  // the pod, not its tag
  EXPECT_EQ(HintWork(req), pods);
  req.mutable_new_node()->add_taints()->set_key("a");
  req.mutable_old_node()->add_taints()->set_key("b");
  req.mutable_old_pod()->add_containers()->add_ports()->set_host_port(80);
  EXPECT_EQ(HintWork(req), 4 * pods);
  // A node of 50000 taints against 50000 one-toleration pods (~3 MB):
  // 2.5 * 10^9 taint checks.
  pb::QueueingHintRequest big;
  for (int i = 0; i < 50000; ++i) {
    big.mutable_new_node()->add_taints()->set_key(absl::StrCat("t", i));
    *big.add_queries()->mutable_pod() = Tolerating(1);
  }
  absl::Status s = CheckWork(HintWork(big), kLimit, "queries", "",
                             "--max-request-work", "send fewer queries");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
}

}  // namespace
}  // namespace kscore::framework
