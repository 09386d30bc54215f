// Requests that would make the scorer's work or memory grow faster than the
// request, sent to the real scorer binary on loopback: each is refused with
// a status naming the field and the bound, and the scorer's peak memory
// (VmHWM) stays under a limit.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "kscore/scorer/v1/scorer.grpc.pb.h"
#include "scorer/testing/wrappers.h"
#include "tests/scorer/subprocess.h"

namespace kscore {
namespace {

namespace pb = ::kscore::scorer::v1;
using ::kscore::testing::MakeNode;
using ::kscore::testing::MakePod;
using ::testing::HasSubstr;

// The most the scorer's peak memory may grow while it answers one of the
// requests below (each under 1 MiB).
constexpr int64_t kPeakGrowthLimitKib = 64 << 10;

constexpr char kConfig[] = R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
)";

int64_t PeakRssKib(int pid) {
  std::ifstream f(absl::StrCat("/proc/", pid, "/status"));
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6));
  }
  return -1;
}

class RequestBoundsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char path[] = "/tmp/kscore-bounds-XXXXXX";
    close(mkstemp(path));
    config_ = path;
    std::ofstream(config_) << kConfig;
    const std::string address = absl::StrCat("127.0.0.1:", testing::FreePort());
    ASSERT_TRUE(scorer_.Start({std::string(KSCORE_BINARY_DIR) + "/bin/scorer",
                               "--config", config_, "--listen", address,
                               "--metrics-bind-address", "0"}));
    // The answers on today's main are hundreds of megabytes: let them in,
    // so the test measures the scorer rather than the client's limit.
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(-1);
    channel_ = grpc::CreateCustomChannel(
        address, grpc::InsecureChannelCredentials(), args);
    ASSERT_TRUE(channel_->WaitForConnected(std::chrono::system_clock::now() +
                                           std::chrono::seconds(20)))
        << scorer_.Output();
    stub_ = pb::Scorer::NewStub(channel_);
  }

  void TearDown() override {
    stub_.reset();
    channel_.reset();
    if (scorer_.Running()) {
      scorer_.Signal(SIGTERM);
      EXPECT_EQ(scorer_.Wait(30000), 0) << scorer_.Output();
    }
    unlink(config_.c_str());
  }

  // Runs `call` (one RPC) and checks that the scorer's peak memory grew by
  // less than the limit; records the growth and the answer's size.
  template <typename Call>
  grpc::Status Measure(const std::string& what,
                       const google::protobuf::Message& request, Call call) {
    const int64_t before = PeakRssKib(scorer_.pid());
    EXPECT_GT(before, 0);
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() +
                     std::chrono::seconds(120));
    size_t answer_bytes = 0;
    grpc::Status s = call(&ctx, &answer_bytes);
    const int64_t grown = PeakRssKib(scorer_.pid()) - before;
    RecordProperty(absl::StrCat(what, "_peak_growth_kib"),
                   std::to_string(grown));
    RecordProperty(absl::StrCat(what, "_answer_bytes"),
                   std::to_string(answer_bytes));
    std::cerr << what << ": request " << request.ByteSizeLong()
              << " bytes, code " << s.error_code() << ", peak grew by " << grown
              << " KiB, answer " << answer_bytes << " bytes\n";
    EXPECT_LT(grown, kPeakGrowthLimitKib)
        << what << ": peak RSS grew by " << grown << " KiB";
    return s;
  }

  std::string config_;
  testing::Subprocess scorer_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<pb::Scorer::Stub> stub_;
};

// A pod of 3000 topology spread constraints, each on its own key (~200
// KB): each of its 3000 queries would list the 3000 keys.
pb::Pod ManyConstraints() {
  pb::Pod pod = MakePod().Name("p").Namespace("ns").Label("app", "web").Obj();
  for (int i = 0; i < 3000; ++i) {
    pb::TopologySpreadConstraint* c = pod.add_topology_spread_constraints();
    c->set_max_skew(1);
    c->set_topology_key(absl::StrCat("example.com/spread-key-", i));
    c->set_when_unsatisfiable("DoNotSchedule");
    (*c->mutable_label_selector()->mutable_match_labels())["app"] = "web";
  }
  return pod;
}

// Evaluate (as every call about a pod) builds the pod's plan to check the
// cluster's answers against it.
TEST_F(RequestBoundsTest, EvaluateOfManySpreadKeysIsInvalid) {
  pb::EvaluateRequest eval;
  eval.set_profile("default-scheduler");
  *eval.mutable_pod() = ManyConstraints();
  *eval.add_nodes() = MakeNode().Name("n1").Obj();
  ASSERT_LT(eval.ByteSizeLong(), 1u << 20);
  grpc::Status s =
      Measure("evaluate", eval, [&](grpc::ClientContext* ctx, size_t* n) {
        pb::EvaluateResponse resp;
        grpc::Status st = stub_->Evaluate(ctx, eval, &resp);
        *n = resp.ByteSizeLong();
        return st;
      });
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
      << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("--max-plan-bytes"));
}

TEST_F(RequestBoundsTest, PlanOfManySpreadKeysIsInvalid) {
  pb::PlanRequest req;
  req.set_profile("default-scheduler");
  *req.mutable_pod() = ManyConstraints();
  ASSERT_LT(req.ByteSizeLong(), 1u << 20);
  grpc::Status s =
      Measure("plan", req, [&](grpc::ClientContext* ctx, size_t* n) {
        pb::PlanResponse resp;
        grpc::Status st = stub_->Plan(ctx, req, &resp);
        *n = resp.ByteSizeLong();
        return st;
      });
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
      << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("pod.topology_spread_constraints"));
  EXPECT_THAT(s.error_message(), HasSubstr("--max-plan-bytes"));

  // A pod as real ones are still gets its plan.
  pb::PlanRequest small = req;
  small.mutable_pod()->mutable_topology_spread_constraints()->DeleteSubrange(
      2, 2998);
  grpc::ClientContext ctx;
  pb::PlanResponse plan;
  s = stub_->Plan(&ctx, small, &plan);
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(plan.queries_size(), 2);
}

// NormalizeScore keeps a row of scores per plugin it is given: the same
// plugin named 100000 times, with 100000 nodes, asked for 80 GB of rows.
TEST_F(RequestBoundsTest, NormalizeScoreNamingAPluginTwiceIsInvalid) {
  pb::NormalizeScoreRequest req;
  req.set_profile("default-scheduler");
  *req.mutable_pod() = MakePod().Name("p").Obj();
  for (int i = 0; i < 100000; ++i) req.add_plugins("TaintToleration");
  for (int i = 0; i < 100000; ++i) req.add_scores();
  ASSERT_LT(req.ByteSizeLong(), 4u << 20);
  grpc::Status s =
      Measure("normalize", req, [&](grpc::ClientContext* ctx, size_t* n) {
        pb::NormalizeScoreResponse resp;
        grpc::Status st = stub_->NormalizeScore(ctx, req, &resp);
        *n = resp.ByteSizeLong();
        return st;
      });
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
      << s.error_message();
  EXPECT_THAT(s.error_message(),
              HasSubstr("plugins[1]: \"TaintToleration\" is listed twice"));
}

// Work that grows with the product of two lists costs CPU rather than
// memory: these check the code and the time the scorer took.
TEST_F(RequestBoundsTest, ManyTolerationsOnManyTaintedNodesAreRefused) {
  // 100000 tolerations (~3 MB) and 5000 nodes, each with a taint only the
  // last toleration tolerates: TaintToleration would compare 5 * 10^8
  // tolerations.
  pb::EvaluateRequest req;
  req.set_profile("default-scheduler");
  *req.mutable_pod() = MakePod().Name("p").Obj();
  for (int i = 0; i < 100000; ++i) {
    pb::Toleration* t = req.mutable_pod()->add_tolerations();
    t->set_key(absl::StrCat("example.com/taint-", i));
    t->set_operator_("Exists");
  }
  for (int i = 0; i < 5000; ++i) {
    pb::Node* n = req.add_nodes();
    *n = MakeNode().Name(absl::StrCat("n", i)).Obj();
    pb::Taint* t = n->add_taints();
    t->set_key("example.com/taint-99999");
    t->set_effect("NoSchedule");
  }
  ASSERT_LT(req.ByteSizeLong(), 4u << 20);
  const auto start = std::chrono::steady_clock::now();
  grpc::Status s =
      Measure("tolerations", req, [&](grpc::ClientContext* ctx, size_t* n) {
        pb::EvaluateResponse resp;
        grpc::Status st = stub_->Evaluate(ctx, req, &resp);
        *n = resp.ByteSizeLong();
        return st;
      });
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  std::cerr << "tolerations: answered in " << ms << " ms\n";
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
      << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("nodes: the call would read"));
  EXPECT_THAT(s.error_message(), HasSubstr("--max-request-work"));
}

TEST_F(RequestBoundsTest, ManyVictimsAgainstALongBudgetAreRefused) {
  // 50000 victims checked against a PodDisruptionBudget that lists 50000
  // disrupted pods (~1.5 MB): 2.5 * 10^9 name comparisons.
  pb::PreemptRequest req;
  req.set_profile("default-scheduler");
  *req.mutable_pod() = MakePod().Name("p").Obj();
  req.mutable_pod()->set_priority(10);
  req.set_num_nodes(1);
  req.set_num_potential_nodes(1);
  pb::PreemptionNode* node = req.add_nodes();
  *node->mutable_node() = MakeNode().Name("n").Obj();
  node->mutable_node()->mutable_allocatable()->set_pods(100000);
  node->mutable_node()->set_pod_count(50000);
  for (int i = 0; i < 50000; ++i) {
    pb::VictimPod* v = node->add_pods();
    v->set_name(absl::StrCat("v", i));
    (*v->mutable_labels())["app"] = "web";
  }
  pb::DisruptionBudget* pdb = req.add_pdbs();
  pdb->set_name("pdb");
  (*pdb->mutable_selector()->mutable_match_labels())["app"] = "web";
  for (int i = 0; i < 50000; ++i) {
    pdb->add_disrupted_pods(absl::StrCat("pod-", i));
  }
  ASSERT_LT(req.ByteSizeLong(), 4u << 20);
  const auto start = std::chrono::steady_clock::now();
  grpc::Status s =
      Measure("victims", req, [&](grpc::ClientContext* ctx, size_t* n) {
        pb::PreemptResponse resp;
        grpc::Status st = stub_->Preempt(ctx, req, &resp);
        *n = resp.ByteSizeLong();
        return st;
      });
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  std::cerr << "victims: answered in " << ms << " ms\n";
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
      << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("nodes[].pods: "));
  EXPECT_THAT(s.error_message(), HasSubstr("--max-request-work"));
}

}  // namespace
}  // namespace kscore
