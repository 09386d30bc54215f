// End-to-end tests of the scorer binary: started for real on a loopback port,
// called through the generated stub.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "kscore/scorer/v1/scorer.grpc.pb.h"
#include "model/node_key.h"
#include "scorer/testing/wrappers.h"
#include "tests/scorer/subprocess.h"

namespace kscore {
namespace {

namespace pb = ::kscore::scorer::v1;
using ::kscore::testing::MakeNode;
using ::kscore::testing::MakePod;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kConfig[] = R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: concentrate-scheduler
  plugins:
    score:
      enabled:
      - name: Concentrate
        weight: 10
  pluginConfig:
  - name: Concentrate
    args:
      labelKey: app
- schedulerName: reject-scheduler
  plugins:
    score:
      enabled:
      - name: Concentrate
        weight: 10
  pluginConfig:
  - name: Concentrate
    args:
      rejectEverything: true
)";

std::string WriteTemp(const std::string& text) {
  char tmpl[] = "/tmp/kscore-config-XXXXXX";
  int fd = mkstemp(tmpl);
  close(fd);
  std::ofstream(tmpl) << text;
  return tmpl;
}

std::string ScorerBinary() {
  return std::string(KSCORE_BINARY_DIR) + "/bin/scorer";
}

// grpc.health.v1.Health/Check for the whole server, with hand-encoded
// messages (an empty request; the response's field 1 is the status enum).
int HealthStatus(const std::shared_ptr<grpc::Channel>& channel) {
  grpc::GenericStub stub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(1));
  grpc::CompletionQueue cq;
  grpc::ByteBuffer request;  // empty HealthCheckRequest
  grpc::Slice empty("");
  request = grpc::ByteBuffer(&empty, 1);
  grpc::ByteBuffer response;
  grpc::Status status;
  auto call =
      stub.PrepareUnaryCall(&ctx, "/grpc.health.v1.Health/Check", request, &cq);
  call->StartCall();
  call->Finish(&response, &status, reinterpret_cast<void*>(1));
  void* tag;
  bool ok;
  cq.Next(&tag, &ok);
  if (!status.ok()) return -1;
  std::vector<grpc::Slice> slices;
  response.Dump(&slices);
  std::string bytes;
  for (const grpc::Slice& s : slices)
    bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
  if (bytes.size() == 2 && bytes[0] == 0x08) return bytes[1];
  return bytes.empty() ? 0 : -2;
}

// GET /metrics over a plain socket: the response body, or "" on failure.
std::string ScrapeMetrics(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "";
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval timeout{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  std::string response;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    const std::string request =
        "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    if (send(fd, request.data(), request.size(), 0) ==
        static_cast<ssize_t>(request.size())) {
      char buf[4096];
      for (ssize_t n; (n = recv(fd, buf, sizeof(buf), 0)) > 0;) {
        response.append(buf, static_cast<size_t>(n));
      }
    }
  }
  close(fd);
  const size_t body = response.find("\r\n\r\n");
  return body == std::string::npos ? "" : response.substr(body + 4);
}

// The value of kscore_scorer_calls_total{method=..., code=...}; -1 if absent.
double CallsTotal(const std::string& metrics, const std::string& method,
                  const std::string& code) {
  std::istringstream lines(metrics);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("kscore_scorer_calls_total{", 0) == 0 &&
        line.find(absl::StrCat("method=\"", method, "\"")) !=
            std::string::npos &&
        line.find(absl::StrCat("code=\"", code, "\"")) != std::string::npos) {
      return std::stod(line.substr(line.rfind(' ') + 1));
    }
  }
  return -1;
}

// The _count of scheduler_framework_extension_point_duration_seconds for
// one series; -1 if absent.
double ExtensionPointCount(const std::string& metrics, const std::string& point,
                           const std::string& status,
                           const std::string& profile) {
  std::istringstream lines(metrics);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(
            "scheduler_framework_extension_point_duration_seconds_count{", 0) ==
            0 &&
        line.find(absl::StrCat("extension_point=\"", point, "\"")) !=
            std::string::npos &&
        line.find(absl::StrCat("status=\"", status, "\"")) !=
            std::string::npos &&
        line.find(absl::StrCat("profile=\"", profile, "\"")) !=
            std::string::npos) {
      return std::stod(line.substr(line.rfind(' ') + 1));
    }
  }
  return -1;
}

class ScorerServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = WriteTemp(kConfig);
    // Ports are picked free, then bound by the child; another test running
    // in parallel can take one in between, so a scorer that could not listen
    // is started again on new ports.
    for (int attempt = 1;; ++attempt) {
      std::vector<int> ports = testing::FreePorts(2);
      ASSERT_EQ(ports.size(), 2u);
      port_ = ports[0];
      metrics_port_ = ports[1];
      address_ = absl::StrCat("127.0.0.1:", port_);
      scorer_ = std::make_unique<testing::Subprocess>();
      ASSERT_TRUE(scorer_->Start(
          {ScorerBinary(), "--config", config_, "--listen", address_,
           "--metrics-bind-address", absl::StrCat("127.0.0.1:", metrics_port_),
           "--max_batch_nodes", "50", "-v", "4"}));
      channel_ =
          grpc::CreateChannel(address_, grpc::InsecureChannelCredentials());
      stub_ = pb::Scorer::NewStub(channel_);
      // Ready when it answers; poll with a deadline.
      auto deadline =
          std::chrono::steady_clock::now() + std::chrono::seconds(20);
      bool lost_port = false;
      while (!channel_->WaitForConnected(std::chrono::system_clock::now() +
                                         std::chrono::milliseconds(100))) {
        if (!scorer_->Running()) {
          lost_port = attempt < 3 && scorer_->Output().find("cannot listen") !=
                                         std::string::npos;
          ASSERT_TRUE(lost_port) << scorer_->Output();
          break;
        }
        ASSERT_LT(std::chrono::steady_clock::now(), deadline)
            << "scorer not ready";
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      if (!lost_port) break;
    }
  }

  void TearDown() override {
    if (scorer_ && scorer_->Running()) {
      scorer_->Signal(SIGTERM);
      EXPECT_EQ(scorer_->Wait(15000), 0) << scorer_->Output();
    }
    unlink(config_.c_str());
  }

  std::unique_ptr<grpc::ClientContext> Ctx() {
    auto ctx = std::make_unique<grpc::ClientContext>();
    ctx->set_deadline(std::chrono::system_clock::now() +
                      std::chrono::seconds(5));
    return ctx;
  }

  std::string config_;
  int port_ = 0;
  int metrics_port_ = 0;
  std::string address_;
  std::unique_ptr<testing::Subprocess> scorer_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<pb::Scorer::Stub> stub_;
};

void AddNodes(google::protobuf::RepeatedPtrField<pb::Node>* out) {
  *out->Add() = MakeNode().Name("n1").LabelCount("app", "web", 1).Obj();
  *out->Add() = MakeNode()
                    .Name("n2")
                    .LabelCount("app", "web", 3)
                    .LabelCount("app", "db", 5)
                    .Obj();
  *out->Add() = MakeNode().Name("n3").LabelCount("app", "db", 2).Obj();
}

TEST_F(ScorerServerTest, CycleStateRoundTripsThroughTheServer) {
  pb::Pod pod = MakePod().Name("web-1").Label("app", "web").Obj();

  pb::PreFilterRequest pre_filter;
  pre_filter.set_profile("concentrate-scheduler");
  *pre_filter.mutable_pod() = pod;
  pb::PreFilterResponse pre_filter_resp;
  ASSERT_TRUE(stub_->PreFilter(Ctx().get(), pre_filter, &pre_filter_resp).ok());

  pb::FilterRequest filter;
  filter.set_profile("concentrate-scheduler");
  *filter.mutable_pod() = pod;
  *filter.mutable_cycle_state() = pre_filter_resp.cycle_state();
  AddNodes(filter.mutable_nodes());
  pb::FilterResponse filter_resp;
  ASSERT_TRUE(stub_->Filter(Ctx().get(), filter, &filter_resp).ok());
  ASSERT_EQ(filter_resp.statuses_size(), 3);
  for (const pb::Status& s : filter_resp.statuses())
    EXPECT_EQ(s.code(), pb::CODE_SUCCESS);

  pb::PreScoreRequest pre_score;
  pre_score.set_profile("concentrate-scheduler");
  *pre_score.mutable_pod() = pod;
  *pre_score.mutable_cycle_state() = pre_filter_resp.cycle_state();
  AddNodes(pre_score.mutable_nodes());
  pb::PreScoreResponse pre_score_resp;
  ASSERT_TRUE(stub_->PreScore(Ctx().get(), pre_score, &pre_score_resp).ok());
  ASSERT_TRUE(pre_score_resp.cycle_state().contains("PreScoreConcentrate"));
  EXPECT_EQ(pre_score_resp.cycle_state().at("PreScoreConcentrate"), "web");

  // Score on a fresh connection (as another replica would): the state in the
  // request is all it has.
  auto other = pb::Scorer::NewStub(
      grpc::CreateChannel(address_, grpc::InsecureChannelCredentials()));
  pb::ScoreRequest score;
  score.set_profile("concentrate-scheduler");
  *score.mutable_pod() = pod;
  *score.mutable_cycle_state() = pre_score_resp.cycle_state();
  *score.mutable_skipped() = pre_score_resp.skipped();
  AddNodes(score.mutable_nodes());
  pb::ScoreResponse score_resp;
  ASSERT_TRUE(other->Score(Ctx().get(), score, &score_resp).ok());
  int k = -1;
  for (int i = 0; i < score_resp.plugins_size(); ++i) {
    if (score_resp.plugins(i) == "Concentrate") k = i;
  }
  ASSERT_GE(k, 0);
  ASSERT_EQ(score_resp.scores_size(), 3);
  EXPECT_EQ(score_resp.scores(0).raw(k), 1);
  EXPECT_EQ(score_resp.scores(1).raw(k), 3);
  EXPECT_EQ(score_resp.scores(2).raw(k), 0);

  // The value comes from CycleState, not the pod: swap it and scores follow.
  (*score.mutable_cycle_state())["PreScoreConcentrate"] = "db";
  ASSERT_TRUE(other->Score(Ctx().get(), score, &score_resp).ok());
  EXPECT_EQ(score_resp.scores(1).raw(k), 5);
  EXPECT_EQ(score_resp.scores(2).raw(k), 2);

  // Normalise the raw scores: onto [0, 100], weighted by 10.
  pb::NormalizeScoreRequest norm;
  norm.set_profile("concentrate-scheduler");
  *norm.mutable_pod() = pod;
  *norm.mutable_cycle_state() = score.cycle_state();
  *norm.mutable_plugins() = score_resp.plugins();
  *norm.mutable_scores() = score_resp.scores();
  pb::NormalizeScoreResponse norm_resp;
  ASSERT_TRUE(stub_->NormalizeScore(Ctx().get(), norm, &norm_resp).ok());
  EXPECT_EQ(norm_resp.weights(k), 10);
  EXPECT_EQ(norm_resp.scores(1).normalized(k), 100);
  EXPECT_EQ(norm_resp.scores(2).normalized(k), 40);

  // Without PreScore's state (a profile may disable it), Score reads the
  // pod's own label, as the Go reference does: the first scores again.
  score.mutable_cycle_state()->erase("PreScoreConcentrate");
  ASSERT_TRUE(other->Score(Ctx().get(), score, &score_resp).ok());
  EXPECT_EQ(score_resp.scores(0).raw(k), 1);
  EXPECT_EQ(score_resp.scores(1).raw(k), 3);
  EXPECT_EQ(score_resp.scores(2).raw(k), 0);
}

// PodTopologySpread through the fine-grained calls, as a debugging client
// makes them: the plan, its answers in every call, and NormalizeScore over
// named scores. A node without the topology key scores 0; without the
// names (compact raw scores) that cannot be told, and the call says so.
TEST_F(ScorerServerTest, SpreadNormalisesNamedScoresAcrossCalls) {
  pb::Pod pod = MakePod().Name("p").Label("foo", "").Obj();
  pb::TopologySpreadConstraint* c = pod.add_topology_spread_constraints();
  c->set_max_skew(1);
  c->set_topology_key("kubernetes.io/hostname");
  c->set_when_unsatisfiable("ScheduleAnyway");
  pb::LabelSelectorRequirement* r =
      c->mutable_label_selector()->add_match_expressions();
  r->set_key("foo");
  r->set_operator_("Exists");

  pb::PlanRequest plan_req;
  plan_req.set_profile("concentrate-scheduler");
  *plan_req.mutable_pod() = pod;
  pb::PlanResponse plan;
  ASSERT_TRUE(stub_->Plan(Ctx().get(), plan_req, &plan).ok());
  ASSERT_EQ(plan.queries_size(), 1);
  EXPECT_TRUE(plan.score_needs_all_feasible());

  // The answers: 4, 2 and 1 matching pods on the nodes; n2 has no hostname.
  pb::ClusterData cluster;
  cluster.add_answers()->set_total(7);
  cluster.set_node_count(3);
  auto node = [](const std::string& name, bool hostname, int64_t count) {
    auto n = MakeNode().Name(name);
    if (hostname) n.Label("kubernetes.io/hostname", name);
    pb::Node out = n.Obj();
    out.add_query_counts(count);
    return out;
  };
  auto add_nodes = [&](google::protobuf::RepeatedPtrField<pb::Node>* out) {
    *out->Add() = node("n1", true, 4);
    *out->Add() = node("n2", false, 2);
    *out->Add() = node("n3", true, 1);
  };

  pb::PreScoreRequest pre_score;
  pre_score.set_profile("concentrate-scheduler");
  *pre_score.mutable_pod() = pod;
  *pre_score.mutable_cluster() = cluster;
  add_nodes(pre_score.mutable_nodes());
  pb::PreScoreResponse pre_score_resp;
  grpc::Status st = stub_->PreScore(Ctx().get(), pre_score, &pre_score_resp);
  ASSERT_TRUE(st.ok()) << st.error_message();

  pb::ScoreRequest score;
  score.set_profile("concentrate-scheduler");
  *score.mutable_pod() = pod;
  *score.mutable_cluster() = cluster;
  *score.mutable_cycle_state() = pre_score_resp.cycle_state();
  *score.mutable_skipped() = pre_score_resp.skipped();
  add_nodes(score.mutable_nodes());
  pb::ScoreResponse score_resp;
  st = stub_->Score(Ctx().get(), score, &score_resp);
  ASSERT_TRUE(st.ok()) << st.error_message();
  int k = -1;
  for (int i = 0; i < score_resp.plugins_size(); ++i) {
    if (score_resp.plugins(i) == "PodTopologySpread") k = i;
  }
  ASSERT_GE(k, 0);
  ASSERT_EQ(score_resp.scores_size(), 3);
  // Weight log(2 + 2): round(4 * 1.386), 0 (ignored), round(1.386).
  EXPECT_EQ(score_resp.scores(0).raw(k), 6);
  EXPECT_EQ(score_resp.scores(1).raw(k), 0);
  EXPECT_EQ(score_resp.scores(2).raw(k), 1);

  pb::NormalizeScoreRequest norm;
  norm.set_profile("concentrate-scheduler");
  *norm.mutable_pod() = pod;
  *norm.mutable_cluster() = cluster;
  *norm.mutable_cycle_state() = score.cycle_state();
  *norm.mutable_plugins() = score_resp.plugins();
  *norm.mutable_scores() = score_resp.scores();
  pb::NormalizeScoreResponse norm_resp;
  st = stub_->NormalizeScore(Ctx().get(), norm, &norm_resp);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(norm_resp.weights(k), 2);
  EXPECT_EQ(norm_resp.scores(0).normalized(k), 16);
  EXPECT_EQ(norm_resp.scores(1).normalized(k), 0);
  EXPECT_EQ(norm_resp.scores(2).normalized(k), 100);

  norm.clear_scores();
  for (const pb::NodeScore& ns : score_resp.scores()) {
    for (int64_t v : ns.raw()) norm.add_raw(v);
  }
  st = stub_->NormalizeScore(Ctx().get(), norm, &norm_resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(st.error_message(), HasSubstr("needs the node names"));
}

TEST_F(ScorerServerTest, EvaluateIsTheFusedCycle) {
  pb::EvaluateRequest req;
  req.set_profile("concentrate-scheduler");
  *req.mutable_pod() =
      MakePod().Name("web-1").Label("app", "web").Req(100, 1 << 20).Obj();
  AddNodes(req.mutable_nodes());
  pb::EvaluateResponse resp;
  grpc::Status st = stub_->Evaluate(Ctx().get(), req, &resp);
  ASSERT_TRUE(st.ok()) << st.error_message();
  ASSERT_EQ(resp.filter_size(), 3);
  ASSERT_EQ(resp.scores_size(), 3);
  int k = -1;
  for (int i = 0; i < resp.plugins_size(); ++i) {
    if (resp.plugins(i) == "Concentrate") k = i;
  }
  ASSERT_GE(k, 0);
  EXPECT_EQ(resp.weights(k), 10);
  EXPECT_EQ(resp.scores(1).normalized(k), 100);
  EXPECT_EQ(resp.scores(0).normalized(k), 33);
  EXPECT_GT(resp.scores(1).total(), resp.scores(0).total());
  EXPECT_GT(resp.scores(0).total(), resp.scores(2).total());
  EXPECT_EQ(resp.cycle_state().at("PreScoreConcentrate"), "web");
}

// A pod with a bound claim and two claims whose class waits for the first
// consumer: one volume in zone a, the class provisions anywhere.
pb::Pod PodWithClaims() {
  pb::Pod pod = MakePod().Name("db-0").Obj();
  pb::PodVolumes* v = pod.mutable_volumes();
  for (const char* name : {"data", "logs", "home"}) {
    pod.add_volume_claims()->set_claim_name(name);
    pb::ClaimState* c = v->add_claims();
    c->set_name(name);
    c->set_found(true);
    c->set_storage_class_name("local");
    c->set_storage_request(10);
  }
  v->mutable_claims(2)->set_volume_name("pv-home");
  v->mutable_claims(2)->set_bind_completed(true);
  pb::StorageClass* cls = v->add_classes();
  cls->set_name("local");
  cls->set_provisioner("csi.example.com");
  cls->set_volume_binding_mode("WaitForFirstConsumer");
  for (const char* name : {"pv-home", "pv-a"}) {
    pb::PersistentVolume* pv = v->add_volumes();
    pv->set_name(name);
    pv->set_storage_class_name("local");
    pv->set_capacity(20);
    pv->set_phase("Available");
  }
  pb::PersistentVolume* home = v->mutable_volumes(0);
  home->set_phase("Bound");
  home->set_has_claim_ref(true);
  home->set_claim_namespace(pod.namespace_());
  home->set_claim_name("home");
  pb::PersistentVolume* pv_a = v->mutable_volumes(1);
  pv_a->set_has_node_affinity(true);
  pb::NodeSelectorRequirement* r =
      pv_a->add_node_affinity()->add_match_expressions();
  r->set_key("zone");
  r->set_operator_("In");
  r->add_values("a");
  return pod;
}

// EvaluateRequest.volume_decisions: for each feasible node, how the unbound
// delayed claims bind there (the bound claim never shows).
TEST_F(ScorerServerTest, EvaluateAnswersVolumeDecisions) {
  pb::EvaluateRequest req;
  req.set_profile("concentrate-scheduler");
  *req.mutable_pod() = PodWithClaims();
  *req.add_nodes() = MakeNode().Name("n1").Label("zone", "a").Obj();
  *req.add_nodes() = MakeNode().Name("n2").Label("zone", "b").Obj();
  *req.add_nodes() = MakeNode().Name("n3").Unschedulable().Obj();
  pb::EvaluateResponse resp;
  ASSERT_TRUE(stub_->Evaluate(Ctx().get(), req, &resp).ok());
  EXPECT_EQ(resp.node_volumes_size(), 0);  // not asked
  EXPECT_THAT(resp.plugins(), ::testing::Contains("VolumeBinding"));

  auto decisions = [](const pb::EvaluateResponse& r) {
    std::vector<std::string> out;
    for (const pb::NodeVolumes& n : r.node_volumes()) {
      for (const pb::ClaimDecision& d : n.claims()) {
        out.push_back(
            absl::StrCat(n.node_name(), ":", d.claim(), "=", d.volume()));
      }
    }
    return out;
  };
  req.set_volume_decisions(true);
  for (pb::Detail detail : {pb::DETAIL_FULL, pb::DETAIL_TOTALS}) {
    req.set_detail(detail);
    ASSERT_TRUE(stub_->Evaluate(Ctx().get(), req, &resp).ok());
    // n1: the zone-a volume for the first claim, the second provisioned;
    // n2: both provisioned; n3 is not feasible.
    EXPECT_THAT(decisions(resp),
                ElementsAre("n1:0=pv-a", "n1:1=", "n2:0=", "n2:1="))
        << detail;
  }
}

// DETAIL_TOTALS says the same as DETAIL_FULL, compactly: rejected nodes by
// index, then the feasible nodes' raw scores and totals in request order.
TEST_F(ScorerServerTest, EvaluateTotalsSayWhatTheFullAnswerSays) {
  pb::EvaluateRequest req;
  req.set_profile("concentrate-scheduler");
  *req.mutable_pod() =
      MakePod().Name("web-1").Label("app", "web").Req(100, 1 << 20).Obj();
  AddNodes(req.mutable_nodes());
  *req.mutable_nodes()->Add() = MakeNode().Name("n4").Unschedulable().Obj();
  req.mutable_nodes()->SwapElements(1, 3);  // n1 n4 n3 n2: n4 rejected
  pb::EvaluateResponse full;
  ASSERT_TRUE(stub_->Evaluate(Ctx().get(), req, &full).ok());
  ASSERT_EQ(full.scores_size(), 3);
  ASSERT_EQ(full.filter(1).code(), pb::CODE_UNSCHEDULABLE_AND_UNRESOLVABLE);

  req.set_detail(pb::DETAIL_TOTALS);
  pb::EvaluateResponse totals;
  ASSERT_TRUE(stub_->Evaluate(Ctx().get(), req, &totals).ok());
  EXPECT_EQ(totals.filter_size(), 0);
  EXPECT_EQ(totals.scores_size(), 0);
  ASSERT_EQ(totals.rejected_size(), 1);
  EXPECT_EQ(totals.rejected(0).index(), 1);
  EXPECT_EQ(totals.rejected(0).status().SerializeAsString(),
            full.filter(1).SerializeAsString());
  EXPECT_THAT(totals.plugins(), ElementsAreArray(full.plugins()));
  EXPECT_THAT(totals.weights(), ElementsAreArray(full.weights()));
  const int k = full.plugins_size();
  ASSERT_EQ(totals.raw_size(), 3 * k);
  ASSERT_EQ(totals.totals_size(), 3);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(totals.totals(i), full.scores(i).total()) << i;
    for (int p = 0; p < k; ++p) {
      EXPECT_EQ(totals.raw(i * k + p), full.scores(i).raw(p)) << i << " " << p;
    }
  }
  EXPECT_NE(totals.totals(0), totals.totals(2));  // the scores do differ

  // With skip_normalize: raw only; NormalizeScore over that raw gives the
  // same totals.
  req.set_skip_normalize(true);
  pb::EvaluateResponse raw_only;
  ASSERT_TRUE(stub_->Evaluate(Ctx().get(), req, &raw_only).ok());
  EXPECT_EQ(raw_only.totals_size(), 0);
  ASSERT_EQ(raw_only.raw_size(), 3 * k);
  pb::NormalizeScoreRequest norm;
  norm.set_profile("concentrate-scheduler");
  *norm.mutable_pod() = req.pod();
  *norm.mutable_cycle_state() = raw_only.cycle_state();
  *norm.mutable_plugins() = raw_only.plugins();
  *norm.mutable_raw() = raw_only.raw();
  pb::NormalizeScoreResponse norm_resp;
  ASSERT_TRUE(stub_->NormalizeScore(Ctx().get(), norm, &norm_resp).ok());
  EXPECT_EQ(norm_resp.scores_size(), 0);
  EXPECT_THAT(norm_resp.totals(), ElementsAreArray(totals.totals()));

  // Bad compact requests name what is wrong.
  norm.add_raw(1);
  grpc::Status st = stub_->NormalizeScore(Ctx().get(), norm, &norm_resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(st.error_message(), HasSubstr("not a multiple of the"));
  norm.mutable_raw()->RemoveLast();
  *norm.add_scores() = full.scores(0);
  st = stub_->NormalizeScore(Ctx().get(), norm, &norm_resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(st.error_message(), HasSubstr("raw and scores are exclusive"));
  req.set_detail(static_cast<pb::Detail>(7));
  st = stub_->Evaluate(Ctx().get(), req, &raw_only);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(st.error_message(), HasSubstr("detail: unknown value 7"));
}

// explain_top adds the best nodes' whole NodeScore to the compact answer,
// best first, each with its index in the request, and names the replica.
TEST_F(ScorerServerTest, EvaluateExplainsTheBestNodesWhenAsked) {
  pb::EvaluateRequest req;
  req.set_profile("concentrate-scheduler");
  *req.mutable_pod() =
      MakePod().Name("web-1").Label("app", "web").Req(100, 1 << 20).Obj();
  AddNodes(req.mutable_nodes());
  *req.mutable_nodes()->Add() = MakeNode().Name("n4").Unschedulable().Obj();
  req.mutable_nodes()->SwapElements(1, 3);  // n1 n4 n3 n2: n4 rejected
  req.set_detail(pb::DETAIL_TOTALS);
  pb::EvaluateResponse plain;
  ASSERT_TRUE(stub_->Evaluate(Ctx().get(), req, &plain).ok());
  EXPECT_EQ(plain.scores_size(), 0);
  EXPECT_EQ(plain.replica(), "");

  req.set_explain_top(2);
  pb::EvaluateResponse resp;
  ASSERT_TRUE(stub_->Evaluate(Ctx().get(), req, &resp).ok());
  EXPECT_THAT(resp.replica(), EndsWith(absl::StrCat(":", port_)));
  EXPECT_THAT(resp.totals(), ElementsAreArray(plain.totals()));
  ASSERT_EQ(resp.scores_size(), 2);
  const std::vector<int> feasible = {0, 2, 3};  // request indices
  int64_t best = 0;
  for (int64_t t : plain.totals()) best = std::max(best, t);
  EXPECT_EQ(resp.scores(0).total(), best);
  EXPECT_GE(resp.scores(0).total(), resp.scores(1).total());
  const int k = resp.plugins_size();
  for (const pb::NodeScore& ns : resp.scores()) {
    const auto at = std::find(feasible.begin(), feasible.end(), ns.index());
    ASSERT_NE(at, feasible.end()) << ns.index();
    const int f = static_cast<int>(at - feasible.begin());
    EXPECT_EQ(ns.node_name(), req.nodes(ns.index()).name());
    EXPECT_EQ(ns.total(), plain.totals(f));
    ASSERT_EQ(ns.raw_size(), k);
    ASSERT_EQ(ns.normalized_size(), k);
    int64_t sum = 0;
    for (int p = 0; p < k; ++p) {
      EXPECT_EQ(ns.raw(p), plain.raw(f * k + p));
      sum += ns.normalized(p) * resp.weights(p);
    }
    EXPECT_EQ(sum, ns.total()) << ns.node_name();
  }

  req.set_explain_top(-1);  // every feasible node
  ASSERT_TRUE(stub_->Evaluate(Ctx().get(), req, &resp).ok());
  EXPECT_EQ(resp.scores_size(), 3);

  // NormalizeScore explains over its raw nodes, indexed in them.
  req.set_skip_normalize(true);
  req.set_explain_top(0);
  pb::EvaluateResponse raw_only;
  ASSERT_TRUE(stub_->Evaluate(Ctx().get(), req, &raw_only).ok());
  pb::NormalizeScoreRequest norm;
  norm.set_profile("concentrate-scheduler");
  *norm.mutable_pod() = req.pod();
  *norm.mutable_cycle_state() = raw_only.cycle_state();
  *norm.mutable_plugins() = raw_only.plugins();
  *norm.mutable_raw() = raw_only.raw();
  norm.set_explain_top(1);
  pb::NormalizeScoreResponse norm_resp;
  ASSERT_TRUE(stub_->NormalizeScore(Ctx().get(), norm, &norm_resp).ok());
  ASSERT_EQ(norm_resp.scores_size(), 1);
  EXPECT_EQ(norm_resp.scores(0).total(), best);
  EXPECT_EQ(norm_resp.totals(norm_resp.scores(0).index()), best);
  EXPECT_THAT(norm_resp.replica(), EndsWith(absl::StrCat(":", port_)));
}

// Batching: a call that normalises keeps a session when asked; an update
// then sends only the changed nodes and answers for every slot, as a whole
// cycle would. A session the replica lacks, at another generation, or for
// another pod is session_missing, never an answer from stale data.
TEST_F(ScorerServerTest, SessionUpdatesAnswerForEverySlot) {
  pb::EvaluateRequest req;
  req.set_profile("concentrate-scheduler");
  req.set_detail(pb::DETAIL_TOTALS);
  *req.mutable_pod() =
      MakePod().Name("web-1").Label("app", "web").Req(100, 1 << 20).Obj();
  AddNodes(req.mutable_nodes());  // n1 (1 web pod), n2 (3), n3 (0)
  req.set_keep_session(42);
  pb::EvaluateResponse kept;
  ASSERT_TRUE(stub_->Evaluate(Ctx().get(), req, &kept).ok());
  ASSERT_EQ(kept.totals_size(), 3);

  // The next pod went to n2; n3 now runs 5 web pods.
  pb::EvaluateRequest up = req;
  up.clear_keep_session();
  up.mutable_pod()->set_name("web-2");
  up.clear_nodes();
  pb::Node n3 = req.nodes(2);
  n3.clear_label_counts();
  pb::LabelCount* lc = n3.add_label_counts();
  lc->set_key("app");
  lc->set_value("web");
  lc->set_count(5);
  *up.add_nodes() = n3;
  up.mutable_update()->set_session(42);
  up.mutable_update()->set_generation(0);
  up.mutable_update()->add_slots(2);
  up.set_explain_top(2);
  pb::EvaluateResponse got;
  grpc::Status st = stub_->Evaluate(Ctx().get(), up, &got);
  ASSERT_TRUE(st.ok()) << st.error_message();
  ASSERT_FALSE(got.session_missing());
  EXPECT_EQ(got.feasible_slots(), 3);
  EXPECT_THAT(got.best_slots(), ElementsAre(2));
  // What a whole cycle over the nodes as they are now says.
  pb::EvaluateRequest whole = req;
  whole.clear_keep_session();
  *whole.mutable_nodes(2) = n3;
  pb::EvaluateResponse want;
  ASSERT_TRUE(stub_->Evaluate(Ctx().get(), whole, &want).ok());
  EXPECT_EQ(got.best_total(), want.totals(2));
  ASSERT_EQ(got.scores_size(), 2);  // the breakdown, by slot
  EXPECT_EQ(got.scores(0).index(), 2);
  EXPECT_EQ(got.scores(0).total(), want.totals(2));

  // The same update again: its generation is gone.
  pb::EvaluateResponse again;
  ASSERT_TRUE(stub_->Evaluate(Ctx().get(), up, &again).ok());
  EXPECT_TRUE(again.session_missing());
  EXPECT_TRUE(again.best_slots().empty());

  // Another pod (another label value) or an unknown session: missing.
  ASSERT_TRUE(stub_->Evaluate(Ctx().get(), req, &kept).ok());  // kept again
  pb::EvaluateRequest other = up;
  (*other.mutable_pod()->mutable_labels())["app"] = "db";
  pb::EvaluateResponse missing;
  ASSERT_TRUE(stub_->Evaluate(Ctx().get(), other, &missing).ok());
  EXPECT_TRUE(missing.session_missing());
  other = up;
  other.mutable_update()->set_session(7);
  ASSERT_TRUE(stub_->Evaluate(Ctx().get(), other, &missing).ok());
  EXPECT_TRUE(missing.session_missing());

  // Slots that do not fit the session are the caller's error.
  ASSERT_TRUE(stub_->Evaluate(Ctx().get(), req, &kept).ok());
  other = up;
  other.mutable_update()->set_slots(0, 9);
  st = stub_->Evaluate(Ctx().get(), other, &missing);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(st.error_message(), HasSubstr("update.slots[0]: 9"));
}

// An update may ask for the windows of later pods (`ahead`): each is
// normalised over the session as the update leaves it, as an update with
// that window would be. Windows ahead need a windowed update, at most 64,
// and slots of the session.
TEST_F(ScorerServerTest, SessionUpdatesAnswerWindowsAhead) {
  pb::EvaluateRequest req;
  req.set_profile("concentrate-scheduler");
  req.set_detail(pb::DETAIL_TOTALS);
  *req.mutable_pod() =
      MakePod().Name("web-1").Label("app", "web").Req(100, 1 << 20).Obj();
  AddNodes(req.mutable_nodes());  // n1 (1 web pod), n2 (3), n3 (0)
  req.set_keep_session(42);
  pb::EvaluateResponse kept;
  ASSERT_TRUE(stub_->Evaluate(Ctx().get(), req, &kept).ok());

  pb::EvaluateRequest up = req;
  up.clear_keep_session();
  up.clear_nodes();
  up.mutable_pod()->set_name("web-2");
  pb::SessionUpdate* u = up.mutable_update();
  u->set_session(42);
  u->set_windowed(true);
  u->add_window(0);
  pb::SlotWindow* first = u->add_ahead();
  first->add_slots(0);
  first->add_slots(2);
  u->add_ahead()->add_slots(2);
  pb::SlotWindow* ranged = u->add_ahead();  // slots 0 to 2, as a range
  ranged->add_ranges(0);
  ranged->add_ranges(3);
  const std::vector<std::vector<int32_t>> windows = {{0, 2}, {2}, {0, 1, 2}};
  up.set_explain_top(1);
  pb::EvaluateResponse got;
  grpc::Status st = stub_->Evaluate(Ctx().get(), up, &got);
  ASSERT_TRUE(st.ok()) << st.error_message();
  ASSERT_FALSE(got.session_missing());
  EXPECT_THAT(got.best_slots(), ElementsAre(0));
  ASSERT_EQ(got.ahead_size(), 3);
  // Each as the update with that window answers at the next generation.
  for (int i = 0; i < 3; ++i) {
    pb::EvaluateRequest alone = up;
    alone.mutable_update()->set_generation(static_cast<uint32_t>(i + 1));
    alone.mutable_update()->clear_ahead();
    alone.mutable_update()->mutable_window()->Assign(windows[i].begin(),
                                                     windows[i].end());
    pb::EvaluateResponse want;
    ASSERT_TRUE(stub_->Evaluate(Ctx().get(), alone, &want).ok());
    EXPECT_EQ(got.ahead(i).best_total(), want.best_total()) << i;
    EXPECT_THAT(got.ahead(i).best_slots(), ElementsAreArray(want.best_slots()))
        << i;
    EXPECT_EQ(got.ahead(i).feasible_slots(), want.feasible_slots()) << i;
    ASSERT_EQ(got.ahead(i).scores_size(), 1) << i;
    EXPECT_EQ(got.ahead(i).scores(0).index(), want.best_slots(0)) << i;
  }
  EXPECT_THAT(got.ahead(0).best_slots(), ElementsAre(0));  // n1 over n3
  EXPECT_EQ(got.ahead(0).feasible_slots(), 2);
  EXPECT_THAT(got.ahead(2).best_slots(), ElementsAre(1));  // n2, 3 web pods
  EXPECT_EQ(got.ahead(2).feasible_slots(), 3);

  // The caller's errors, each named.
  struct Bad {
    std::function<void(pb::SessionUpdate*)> edit;
    std::string says;
  };
  for (const Bad& bad : std::vector<Bad>{
           {[](pb::SessionUpdate* b) { b->set_windowed(false); },
            "update.ahead: only with update.windowed"},
           {[](pb::SessionUpdate* b) {
              for (int i = 0; i < 64; ++i) b->add_ahead();
            },
            "update.ahead has 67 windows: at most 64"},
           {[](pb::SessionUpdate* b) { b->mutable_ahead(1)->add_slots(9); },
            "update.ahead[1].slots[1]: 9 is not a slot"},
           {[](pb::SessionUpdate* b) { b->mutable_ahead(0)->add_slots(2); },
            "update.ahead[0].slots[2]: slot 2 is listed twice"},
           {[](pb::SessionUpdate* b) { b->mutable_ahead(2)->add_ranges(1); },
            "update.ahead[2].ranges has 3 entries: pairs"},
           {[](pb::SessionUpdate* b) { b->mutable_ahead(2)->set_ranges(1, 4); },
            "update.ahead[2].ranges[0]: slots 0 to 3 are not all slots (0..2)"},
           {[](pb::SessionUpdate* b) {
              b->mutable_ahead(2)->set_ranges(0, -1);
            },
            "update.ahead[2].ranges[0]: slots -1 to"}}) {
    ASSERT_TRUE(stub_->Evaluate(Ctx().get(), req, &kept).ok());
    pb::EvaluateRequest other = up;
    other.mutable_update()->set_generation(0);
    bad.edit(other.mutable_update());
    pb::EvaluateResponse refused;
    st = stub_->Evaluate(Ctx().get(), other, &refused);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << bad.says;
    EXPECT_THAT(st.error_message(), HasSubstr(bad.says));
  }
}

// Nodes by content key: a replica that lacks a node's key names it in
// missing_nodes; once sent whole with its key, the key alone (with the
// cycle's parts) stands for it, and the answer is the whole node's.
TEST_F(ScorerServerTest, EvaluateTakesNodesByContentKey) {
  pb::ListProfilesResponse listed;
  ASSERT_TRUE(
      stub_->ListProfiles(Ctx().get(), pb::ListProfilesRequest(), &listed)
          .ok());
  EXPECT_TRUE(listed.content_keys());
  pb::EvaluateRequest whole;
  whole.set_profile("concentrate-scheduler");
  whole.set_detail(pb::DETAIL_TOTALS);
  *whole.mutable_pod() =
      MakePod().Name("web-1").Label("app", "web").Req(100, 1 << 20).Obj();
  AddNodes(whole.mutable_nodes());
  pb::EvaluateRequest refs = whole;
  for (int i = 0; i < whole.nodes_size(); ++i) {
    pb::Node* n = whole.mutable_nodes(i);
    n->set_content_key(model::NodeContentKey(*n));
    pb::Node* r = refs.mutable_nodes(i);
    pb::Node parts;
    *parts.mutable_label_counts() = r->label_counts();
    parts.set_content_key(n->content_key());
    *r = parts;
  }
  pb::EvaluateResponse missing;
  ASSERT_TRUE(stub_->Evaluate(Ctx().get(), refs, &missing).ok());
  EXPECT_THAT(missing.missing_nodes(), ElementsAre(0, 1, 2));
  EXPECT_TRUE(missing.totals().empty());
  pb::EvaluateResponse want, got;
  ASSERT_TRUE(stub_->Evaluate(Ctx().get(), whole, &want).ok());
  ASSERT_EQ(want.totals_size(), 3);
  grpc::Status st = stub_->Evaluate(Ctx().get(), refs, &got);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_TRUE(got.missing_nodes().empty());
  EXPECT_THAT(got.totals(), ElementsAreArray(want.totals()));
  EXPECT_THAT(got.raw(), ElementsAreArray(want.raw()));
}

TEST_F(ScorerServerTest, RejectEverythingRejectsEveryNodeNamingConcentrate) {
  pb::EvaluateRequest req;
  req.set_profile("reject-scheduler");
  *req.mutable_pod() = MakePod().Name("p").Label("app", "web").Obj();
  AddNodes(req.mutable_nodes());
  pb::EvaluateResponse resp;
  ASSERT_TRUE(stub_->Evaluate(Ctx().get(), req, &resp).ok());
  ASSERT_EQ(resp.filter_size(), 3);
  for (const pb::Status& s : resp.filter()) {
    EXPECT_EQ(s.code(), pb::CODE_UNSCHEDULABLE);
    EXPECT_EQ(s.plugin(), "Concentrate");
    EXPECT_THAT(
        s.reasons(),
        ElementsAre("node(s) were rejected by Concentrate (rejectEverything)"));
  }
  EXPECT_EQ(resp.scores_size(), 0);
}

TEST_F(ScorerServerTest, BadRequestsGetInvalidArgument) {
  pb::EvaluateRequest req;
  req.set_profile("concentrate-scheduler");
  pb::EvaluateResponse resp;
  grpc::Status st = stub_->Evaluate(Ctx().get(), req, &resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(st.error_message(), HasSubstr("pod is required"));

  *req.mutable_pod() = MakePod().Name("p").Obj();
  *req.add_nodes() = MakeNode().Name("n1").Obj();
  *req.add_nodes() = MakeNode().Name("n2").Obj();
  *req.add_nodes() = MakeNode().Name("n1").Obj();
  st = stub_->Evaluate(Ctx().get(), req, &resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(
      st.error_message(),
      HasSubstr("nodes[2].name: duplicate node name \"n1\" (also nodes[0])"));

  // Extended resources are a list with one entry per name.
  req.clear_nodes();
  *req.add_nodes() = MakeNode().Name("n1").Obj();
  pb::Node* twice = req.add_nodes();
  *twice = MakeNode().Name("n2").ScalarCapacity("example.com/gpu", 2).Obj();
  pb::ScalarResource* again = twice->mutable_allocatable()->add_scalar();
  again->set_name("example.com/gpu");
  again->set_value(4);
  st = stub_->Evaluate(Ctx().get(), req, &resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(st.error_message(),
              HasSubstr("nodes[1].allocatable.scalar[1]: duplicate "
                        "\"example.com/gpu\" (also scalar[0])"));
  req.clear_nodes();
  *req.mutable_pod() =
      MakePod().Name("p").ScalarReq("example.com/gpu", 1).Obj();
  req.mutable_pod()->mutable_containers(0)->mutable_requests()->add_scalar();
  st = stub_->Evaluate(Ctx().get(), req, &resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(st.error_message(),
              HasSubstr("pod.containers[0].requests.scalar[1].name is "
                        "required"));
  *req.mutable_pod() = MakePod().Name("p").Obj();

  req.clear_nodes();
  for (int i = 0; i < 51; ++i)
    *req.add_nodes() = MakeNode().Name(absl::StrCat("n", i)).Obj();
  st = stub_->Evaluate(Ctx().get(), req, &resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(st.error_message(),
              HasSubstr("batch of 51 nodes is larger than the limit of 50"));

  pb::ScoreRequest score;
  score.set_profile("concentrate-scheduler");
  *score.mutable_pod() = MakePod().Name("p").Obj();
  (*score.mutable_cycle_state())["kscore.SkipFilter"] = "";
  pb::NormalizeScoreRequest norm;
  norm.set_profile("concentrate-scheduler");
  *norm.mutable_pod() = MakePod().Name("p").Obj();
  norm.add_plugins("NoSuchPlugin");
  pb::NormalizeScoreResponse norm_resp;
  st = stub_->NormalizeScore(Ctx().get(), norm, &norm_resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(st.error_message(),
              HasSubstr("\"NoSuchPlugin\" is not a score plugin"));

  // The server is still up after all of that.
  EXPECT_TRUE(scorer_->Running());
}

// Every number from the wire that must not be negative is checked once per
// request, before any plugin runs: INVALID_ARGUMENT naming the field.
TEST_F(ScorerServerTest, NegativeNumbersAreInvalidArgumentNamingTheField) {
  pb::EvaluateRequest good;
  good.set_profile("concentrate-scheduler");
  *good.mutable_pod() =
      MakePod().Name("web-1").Label("app", "web").Req(100, 1 << 20).Obj();
  AddNodes(good.mutable_nodes());
  *good.add_nodes() = MakeNode().Name("n4").Obj();
  pb::EvaluateResponse resp;
  ASSERT_TRUE(stub_->Evaluate(Ctx().get(), good, &resp).ok());

  struct Case {
    std::string name;
    void (*breaks)(pb::EvaluateRequest&);
    std::string message;
  };
  std::vector<Case> cases = {
      {"allocatable cpu",
       [](pb::EvaluateRequest& r) {
         r.mutable_nodes(3)->mutable_allocatable()->set_milli_cpu(-5);
       },
       "nodes[3].allocatable.milli_cpu: must not be negative, got -5"},
      {"requested aggregate",
       [](pb::EvaluateRequest& r) {
         r.mutable_nodes(1)->mutable_requested()->set_memory(-1);
       },
       "nodes[1].requested.memory: must not be negative, got -1"},
      {"pod count",
       [](pb::EvaluateRequest& r) { r.mutable_nodes(0)->set_pod_count(-1); },
       "nodes[0].pod_count: must not be negative, got -1"},
      {"label count",
       [](pb::EvaluateRequest& r) {
         r.mutable_nodes(1)->mutable_label_counts(1)->set_count(-5);
       },
       "nodes[1].label_counts[1].count: must not be negative, got -5"},
      {"a container's request",
       [](pb::EvaluateRequest& r) {
         r.mutable_pod()->mutable_containers(0)->mutable_requests()->set_memory(
             -1);
       },
       "pod.containers[0].requests.memory: must not be negative, got -1"},
      {"a host port",
       [](pb::EvaluateRequest& r) {
         r.mutable_pod()->mutable_containers(0)->add_ports()->set_host_port(
             70000);
       },
       "pod.containers[0].ports[0].host_port: must be a port in 0..65535, "
       "got 70000"},
      {"the cluster's node count",
       [](pb::EvaluateRequest& r) { r.mutable_cluster()->set_node_count(-3); },
       "cluster.node_count: must not be negative, got -3"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    pb::EvaluateRequest req = good;
    c.breaks(req);
    grpc::Status st = stub_->Evaluate(Ctx().get(), req, &resp);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(st.error_message(), c.message);
  }

  // NormalizeScore's raw scores: what the plugin's Score could give.
  pb::NormalizeScoreRequest norm;
  norm.set_profile("concentrate-scheduler");
  *norm.mutable_pod() = good.pod();
  norm.add_plugins("Concentrate");
  norm.add_raw(3);
  norm.add_raw(-5);
  pb::NormalizeScoreResponse norm_resp;
  grpc::Status st = stub_->NormalizeScore(Ctx().get(), norm, &norm_resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(st.error_message(),
            "raw[1]: must not be negative, got -5 (a raw score of "
            "Concentrate)");
  norm.clear_raw();
  norm.add_plugins("NodeResourcesFit");
  pb::NodeScore* ns = norm.add_scores();
  ns->set_node_name("n1");
  ns->add_raw(1);
  ns->add_raw(250);
  st = stub_->NormalizeScore(Ctx().get(), norm, &norm_resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(st.error_message(),
            "scores[0].raw[1]: must be in [0, 100], got 250 (a raw score of "
            "NodeResourcesFit)");

  // QueueingHint's nodes and pods.
  pb::QueueingHintRequest hint;
  hint.set_profile("concentrate-scheduler");
  hint.mutable_event()->set_resource(pb::EVENT_RESOURCE_NODE);
  hint.mutable_event()->set_action_type(1);  // Add
  *hint.mutable_new_node() = MakeNode().Name("n1").Capacity(1, -2, 1).Obj();
  pb::HintQuery* q = hint.add_queries();
  *q->mutable_pod() = MakePod().Name("p").Obj();
  q->add_plugins("NodeResourcesFit");
  pb::QueueingHintResponse hint_resp;
  st = stub_->QueueingHint(Ctx().get(), hint, &hint_resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(st.error_message(),
            "new_node.allocatable.memory: must not be negative, got -2");
  *hint.mutable_new_node() = MakeNode().Name("n1").Obj();
  *q->mutable_pod() = MakePod().Name("p").Req(-100, 0).Obj();
  st = stub_->QueueingHint(Ctx().get(), hint, &hint_resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(st.error_message(),
            "queries[0].pod.containers[0].requests.milli_cpu: must not be "
            "negative, got -100");
  EXPECT_TRUE(scorer_->Running());
}

// Quantities and counts near the int64 limit: sums saturate instead of
// wrapping into a fit, and normalising stays in range instead of failing
// with INTERNAL.
TEST_F(ScorerServerTest, NumbersNearTheLimitSaturate) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  pb::EvaluateRequest req;
  req.set_profile("concentrate-scheduler");
  *req.mutable_pod() = MakePod()
                           .Name("web-1")
                           .Label("app", "web")
                           .Req(kMax - 1, 0)
                           .Req(kMax - 1, 0)
                           .Obj();
  AddNodes(req.mutable_nodes());
  pb::EvaluateResponse resp;
  grpc::Status st = stub_->Evaluate(Ctx().get(), req, &resp);
  ASSERT_TRUE(st.ok()) << st.error_message();
  ASSERT_EQ(resp.filter_size(), 3);
  for (const pb::Status& f : resp.filter()) {
    EXPECT_EQ(f.code(), pb::CODE_UNSCHEDULABLE_AND_UNRESOLVABLE);
    EXPECT_THAT(f.reasons(), ElementsAre("Insufficient cpu"));
  }

  *req.mutable_pod() = MakePod().Name("web-1").Label("app", "web").Obj();
  req.clear_nodes();
  *req.add_nodes() = MakeNode().Name("n1").LabelCount("app", "web", kMax).Obj();
  *req.add_nodes() =
      MakeNode().Name("n2").LabelCount("app", "web", kMax / 2).Obj();
  st = stub_->Evaluate(Ctx().get(), req, &resp);
  ASSERT_TRUE(st.ok()) << st.error_message();
  ASSERT_EQ(resp.scores_size(), 2);
  int k = -1;
  for (int i = 0; i < resp.plugins_size(); ++i) {
    if (resp.plugins(i) == "Concentrate") k = i;
  }
  ASSERT_GE(k, 0);
  EXPECT_EQ(resp.scores(0).normalized(k), 100);
  EXPECT_EQ(resp.scores(1).normalized(k), 49);
}

TEST_F(ScorerServerTest, UnknownProfileIsNotFound) {
  pb::EvaluateRequest req;
  req.set_profile("nope");
  *req.mutable_pod() = MakePod().Name("p").Obj();
  pb::EvaluateResponse resp;
  grpc::Status st = stub_->Evaluate(Ctx().get(), req, &resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(st.error_message(),
              HasSubstr("profile \"nope\" not found (serving: "
                        "concentrate-scheduler, reject-scheduler)"));
}

TEST_F(ScorerServerTest, ListProfilesTellsTheShimWhatToSend) {
  pb::ListProfilesResponse resp;
  ASSERT_TRUE(
      stub_->ListProfiles(Ctx().get(), pb::ListProfilesRequest(), &resp).ok());
  ASSERT_EQ(resp.profiles_size(), 2);
  EXPECT_EQ(resp.profiles(0).scheduler_name(), "concentrate-scheduler");
  EXPECT_THAT(resp.profiles(0).label_count_keys(), ElementsAre("app"));
  EXPECT_EQ(resp.config_hash().size(), 16u);
  // Registrations the shim must ask QueueingHint about say so.
  bool fit_node_hinted = false;
  for (const pb::PluginInfo& p : resp.profiles(0).plugins()) {
    if (p.name() != "NodeResourcesFit") continue;
    for (const pb::ClusterEvent& e : p.events()) {
      if (e.resource() == pb::EVENT_RESOURCE_NODE) fit_node_hinted = e.hinted();
    }
  }
  EXPECT_TRUE(fit_node_hinted);
}

// A request planned against another configuration is refused, not answered
// by this replica's rules; the right hash (or none) is served.
TEST_F(ScorerServerTest, RequestsForAnotherConfigurationAreRefused) {
  pb::ListProfilesResponse profiles;
  ASSERT_TRUE(
      stub_->ListProfiles(Ctx().get(), pb::ListProfilesRequest(), &profiles)
          .ok());
  pb::EvaluateRequest req;
  req.set_profile("concentrate-scheduler");
  *req.mutable_pod() = MakePod().Name("p").Obj();
  *req.add_nodes() = MakeNode().Name("n1").Obj();
  pb::EvaluateResponse resp;
  req.set_config_hash(profiles.config_hash());
  EXPECT_TRUE(stub_->Evaluate(Ctx().get(), req, &resp).ok());
  req.set_config_hash("0123456789abcdef");
  grpc::Status st = stub_->Evaluate(Ctx().get(), req, &resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(
      st.error_message(),
      HasSubstr(absl::StrCat("configuration hash mismatch: this "
                             "scorer's is ",
                             profiles.config_hash(),
                             ", the request expects 0123456789abcdef")));
  pb::NormalizeScoreRequest norm;
  norm.set_profile("concentrate-scheduler");
  *norm.mutable_pod() = MakePod().Name("p").Obj();
  norm.set_config_hash("0123456789abcdef");
  pb::NormalizeScoreResponse norm_resp;
  EXPECT_EQ(stub_->NormalizeScore(Ctx().get(), norm, &norm_resp).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
}

// A lower-priority pod on a node, as the shim sends it for Preempt.
pb::VictimPod VictimOf(const std::string& name, int32_t priority,
                       int64_t milli_cpu, int64_t start_seconds) {
  pb::VictimPod v;
  v.set_namespace_("default");
  v.set_name(name);
  v.set_priority(priority);
  v.mutable_requests()->set_milli_cpu(milli_cpu);
  v.mutable_non_zero_requests()->set_milli_cpu(milli_cpu);
  v.set_start_time_unix_nanos(start_seconds * 1'000'000'000);
  return v;
}

// Two full 2-cpu nodes: n1's lower-priority pods are one of 2 cpus (pri 5)
// and one of 1 cpu (pri 1) beside a pod that stays; n2's is one 2-cpu pod of
// priority 10. A pod of priority 100 asking 1 cpu.
pb::PreemptRequest PreemptRequestFor(const std::string& profile) {
  pb::PreemptRequest req;
  req.set_profile(profile);
  *req.mutable_pod() = MakePod().Name("urgent").Req(1000, 0).Obj();
  req.mutable_pod()->set_priority(100);
  pb::PreemptionNode* n1 = req.add_nodes();
  *n1->mutable_node() = MakeNode()
                            .Name("n1")
                            .Capacity(4000, int64_t{1} << 30, 110)
                            .Requested(4000, 0)
                            .PodCount(3)
                            .Obj();
  *n1->add_pods() = VictimOf("big", 5, 2000, 100);
  *n1->add_pods() = VictimOf("small", 1, 1000, 200);
  pb::PreemptionNode* n2 = req.add_nodes();
  *n2->mutable_node() = MakeNode()
                            .Name("n2")
                            .Capacity(2000, int64_t{1} << 30, 110)
                            .Requested(2000, 0)
                            .PodCount(1)
                            .Obj();
  *n2->add_pods() = VictimOf("other", 10, 2000, 100);
  req.set_num_potential_nodes(2);
  req.set_num_nodes(3);
  return req;
}

TEST_F(ScorerServerTest, PreemptPicksTheNodeAndItsVictims) {
  pb::ListProfilesResponse profiles;
  ASSERT_TRUE(
      stub_->ListProfiles(Ctx().get(), pb::ListProfilesRequest(), &profiles)
          .ok());
  bool listed = false;
  for (const pb::PluginInfo& p : profiles.profiles(0).plugins()) {
    if (p.name() != "DefaultPreemption") continue;
    listed = true;
    EXPECT_THAT(p.extension_points(), ElementsAre("PostFilter"));
  }
  EXPECT_TRUE(listed) << "ListProfiles tells the shim to call Preempt";

  pb::PreemptRequest req = PreemptRequestFor("concentrate-scheduler");
  req.set_config_hash(profiles.config_hash());
  pb::PreemptResponse resp;
  grpc::Status st = stub_->Preempt(Ctx().get(), req, &resp);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(resp.status().code(), pb::CODE_SUCCESS);
  EXPECT_EQ(resp.message(),
            "preemption: found a potential placement for pod on node n1, "
            "preempting 1 victims");
  // n1 frees a cpu by evicting "small" (the older, more important "big"
  // is added back first and stays); n2 would evict a pod of priority 10.
  ASSERT_EQ(resp.candidates_size(), 2);
  ASSERT_EQ(resp.chosen(), 0);
  const pb::PreemptionCandidate& c = resp.candidates(0);
  EXPECT_EQ(c.node(), 0);
  EXPECT_THAT(c.victims(), ElementsAre(1));
  EXPECT_EQ(c.highest_priority(), 1);
  EXPECT_EQ(c.sum_priorities(), 1 + (int64_t{1} << 31));
  EXPECT_EQ(c.earliest_start_of_highest_unix_nanos(), 200'000'000'000);
  EXPECT_EQ(resp.candidates(1).node(), 1);
  EXPECT_EQ(resp.candidates(1).highest_priority(), 10);
}

TEST_F(ScorerServerTest, PreemptWithoutCandidateSaysWhyAsUpstream) {
  // Concentrate rejects every node whatever is removed.
  pb::PreemptRequest req = PreemptRequestFor("reject-scheduler");
  pb::PreemptResponse resp;
  grpc::Status st = stub_->Preempt(Ctx().get(), req, &resp);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(resp.status().code(), pb::CODE_UNSCHEDULABLE);
  EXPECT_EQ(resp.status().plugin(), "DefaultPreemption");
  EXPECT_EQ(resp.chosen(), -1);
  EXPECT_EQ(resp.candidates_size(), 0);
  EXPECT_THAT(resp.message(),
              ::testing::StartsWith("preemption: 0/3 nodes are available: 1 "
                                    "Preemption is not helpful for "
                                    "scheduling, 2 "));
  EXPECT_THAT(resp.status().reasons(), ElementsAre(resp.message()));

  req.mutable_pod()->set_preemption_policy("Never");
  st = stub_->Preempt(Ctx().get(), req, &resp);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_EQ(resp.message(),
            "preemption: not eligible due to preemptionPolicy=Never.");
}

TEST_F(ScorerServerTest, BadPreemptRequestsNameTheField) {
  auto call = [&](const pb::PreemptRequest& req) {
    pb::PreemptResponse resp;
    return stub_->Preempt(Ctx().get(), req, &resp);
  };
  pb::PreemptRequest req = PreemptRequestFor("concentrate-scheduler");
  req.mutable_nodes(1)->mutable_node()->set_name("n1");
  grpc::Status st = call(req);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(st.error_message(),
              HasSubstr("nodes[1].node.name: duplicate node name \"n1\""));

  req = PreemptRequestFor("concentrate-scheduler");
  req.mutable_nodes(0)->mutable_pods(1)->add_terms(0);
  st = call(req);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(st.error_message(),
              HasSubstr("nodes[0].pods[1].terms[0]: 0 is not an index into "
                        "cluster.existing_terms"));

  req = PreemptRequestFor("concentrate-scheduler");
  req.set_num_nodes(1);
  st = call(req);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(st.error_message(), HasSubstr("num_nodes: 1 is less than"));

  req = PreemptRequestFor("nope");
  EXPECT_EQ(call(req).error_code(), grpc::StatusCode::NOT_FOUND);

  req = PreemptRequestFor("concentrate-scheduler");
  req.set_config_hash("0123456789abcdef");
  st = call(req);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(st.error_message(), HasSubstr("configuration hash mismatch"));
}

// QueueingHint: one answer per query, from the named plugins' hints.
TEST_F(ScorerServerTest, QueueingHintAnswersEachQuery) {
  pb::QueueingHintRequest req;
  req.set_profile("concentrate-scheduler");
  req.mutable_event()->set_resource(pb::EVENT_RESOURCE_NODE);
  req.mutable_event()->set_action_type(1);  // Add
  *req.mutable_new_node() = MakeNode()
                                .Name("n1")
                                .Capacity(2000, int64_t{4} << 30, 110)
                                .Taint("dedicated", "db", "NoSchedule")
                                .Obj();
  // Fits the new node: NodeResourcesFit queues it.
  pb::HintQuery* fits = req.add_queries();
  *fits->mutable_pod() = MakePod().Name("small").Req(1000, 0).Obj();
  fits->add_plugins("NodeResourcesFit");
  // Does not tolerate its taint: TaintToleration skips it.
  pb::HintQuery* tainted = req.add_queries();
  *tainted->mutable_pod() = MakePod().Name("untolerating").Obj();
  tainted->add_plugins("TaintToleration");
  pb::QueueingHintResponse resp;
  grpc::Status st = stub_->QueueingHint(Ctx().get(), req, &resp);
  ASSERT_TRUE(st.ok()) << st.error_message();
  EXPECT_THAT(resp.queue(), ElementsAre(true, false));
}

TEST_F(ScorerServerTest, BadQueueingHintRequestsNameTheField) {
  pb::QueueingHintRequest good;
  good.set_profile("concentrate-scheduler");
  good.mutable_event()->set_resource(pb::EVENT_RESOURCE_NODE);
  good.mutable_event()->set_action_type(1);  // Add
  *good.mutable_new_node() = MakeNode().Name("n1").Obj();
  pb::HintQuery* q = good.add_queries();
  *q->mutable_pod() = MakePod().Name("p").Obj();
  q->add_plugins("NodeUnschedulable");
  pb::QueueingHintResponse resp;
  ASSERT_TRUE(stub_->QueueingHint(Ctx().get(), good, &resp).ok());

  struct Case {
    std::string name;
    void (*breaks)(pb::QueueingHintRequest&);
    std::string message;
  };
  std::vector<Case> cases = {
      {"no event", [](pb::QueueingHintRequest& r) { r.clear_event(); },
       "event is required"},
      {"resource unspecified",
       [](pb::QueueingHintRequest& r) {
         r.mutable_event()->set_resource(pb::EVENT_RESOURCE_UNSPECIFIED);
       },
       "event.resource: EVENT_RESOURCE_UNSPECIFIED (0) is not a resource"},
      {"two action bits",
       [](pb::QueueingHintRequest& r) {
         r.mutable_event()->set_action_type(1 | 16);
       },
       "event.action_type: want exactly one action bit, got 17"},
      {"an add without the new node",
       [](pb::QueueingHintRequest& r) { r.clear_new_node(); },
       "new_node is required for a NodeAdd event"},
      {"a query without plugins",
       [](pb::QueueingHintRequest& r) {
         r.mutable_queries(0)->clear_plugins();
       },
       "queries[0].plugins is empty"},
      {"a query without a pod",
       [](pb::QueueingHintRequest& r) { r.mutable_queries(0)->clear_pod(); },
       "queries[0].pod is required"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    pb::QueueingHintRequest req = good;
    c.breaks(req);
    grpc::Status st = stub_->QueueingHint(Ctx().get(), req, &resp);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(st.error_message(), HasSubstr(c.message));
  }

  // A stale configuration hash: what Evaluate answers, word for word.
  pb::QueueingHintRequest stale = good;
  stale.set_config_hash("0123456789abcdef");
  grpc::Status st = stub_->QueueingHint(Ctx().get(), stale, &resp);
  pb::EvaluateRequest eval;
  eval.set_profile("concentrate-scheduler");
  eval.set_config_hash("0123456789abcdef");
  *eval.mutable_pod() = MakePod().Name("p").Obj();
  pb::EvaluateResponse eval_resp;
  grpc::Status want = stub_->Evaluate(Ctx().get(), eval, &eval_resp);
  EXPECT_EQ(want.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(st.error_code(), want.error_code());
  EXPECT_EQ(st.error_message(), want.error_message());
  EXPECT_TRUE(scorer_->Running());
}

TEST_F(ScorerServerTest, MetricsCountCallsByMethodAndCode) {
  // Every method's OK series is there from the start.
  std::string before = ScrapeMetrics(metrics_port_);
  ASSERT_THAT(before, HasSubstr("# TYPE kscore_scorer_calls_total counter"));
  EXPECT_EQ(CallsTotal(before, "Evaluate", "OK"), 0);
  EXPECT_EQ(CallsTotal(before, "Evaluate", "INVALID_ARGUMENT"), -1);

  pb::EvaluateRequest req;
  req.set_profile("concentrate-scheduler");
  *req.mutable_pod() = MakePod().Name("web-1").Label("app", "web").Obj();
  AddNodes(req.mutable_nodes());
  pb::EvaluateResponse resp;
  ASSERT_TRUE(stub_->Evaluate(Ctx().get(), req, &resp).ok());
  ASSERT_TRUE(stub_->Evaluate(Ctx().get(), req, &resp).ok());
  req.clear_profile();
  ASSERT_EQ(stub_->Evaluate(Ctx().get(), req, &resp).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);

  std::string after = ScrapeMetrics(metrics_port_);
  EXPECT_EQ(CallsTotal(after, "Evaluate", "OK"), 2) << after;
  EXPECT_EQ(CallsTotal(after, "Evaluate", "INVALID_ARGUMENT"), 1) << after;
  EXPECT_EQ(CallsTotal(after, "Score", "OK"), 0) << after;
}

TEST_F(ScorerServerTest, MetricsTimeEachExtensionPointAsKubeScheduler) {
  const std::string before = ScrapeMetrics(metrics_port_);
  ASSERT_THAT(before, HasSubstr("kscore_scorer_calls_total"));
  // Series appear at their first observation, as upstream's.
  EXPECT_EQ(
      ExtensionPointCount(before, "Filter", "Success", "concentrate-scheduler"),
      -1);

  pb::EvaluateRequest req;
  req.set_profile("concentrate-scheduler");
  *req.mutable_pod() = MakePod().Name("web-1").Label("app", "web").Obj();
  AddNodes(req.mutable_nodes());
  pb::EvaluateResponse resp;
  ASSERT_TRUE(stub_->Evaluate(Ctx().get(), req, &resp).ok());
  ASSERT_TRUE(stub_->Evaluate(Ctx().get(), req, &resp).ok());
  req.set_profile("reject-scheduler");
  ASSERT_TRUE(stub_->Evaluate(Ctx().get(), req, &resp).ok());

  const std::string after = ScrapeMetrics(metrics_port_);
  ASSERT_THAT(after,
              HasSubstr("# TYPE "
                        "scheduler_framework_extension_point_duration_seconds "
                        "histogram"));
  // One observation per point per call, whatever the number of nodes.
  for (const char* point : {"PreFilter", "Filter", "PreScore", "Score"}) {
    EXPECT_EQ(
        ExtensionPointCount(after, point, "Success", "concentrate-scheduler"),
        2)
        << point << "\n"
        << after;
  }
  // Every node rejected: Filter succeeded, nothing was left to score.
  EXPECT_EQ(ExtensionPointCount(after, "Filter", "Success", "reject-scheduler"),
            1)
      << after;
  EXPECT_EQ(ExtensionPointCount(after, "Score", "Success", "reject-scheduler"),
            -1)
      << after;
  // Upstream's buckets: ExponentialBuckets(0.0001, 2, 12).
  EXPECT_THAT(after, HasSubstr("extension_point=\"Score\",profile=\""
                               "concentrate-scheduler\",status=\"Success\","
                               "le=\"0.2048\"}"));
}

TEST(ScorerBinaryTest, MetricsCanBeDisabledAndABusyPortDoesNotStopScoring) {
  const std::string config = WriteTemp(kConfig);
  const int busy = testing::FreePort();
  // Hold the metrics port, so the second scorer cannot have it.
  int holder = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(busy));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(holder, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(listen(holder, 1), 0);
  for (const std::string& metrics :
       {std::string("0"), absl::StrCat("127.0.0.1:", busy)}) {
    const std::string address = absl::StrCat("127.0.0.1:", testing::FreePort());
    testing::Subprocess p;
    ASSERT_TRUE(p.Start({ScorerBinary(), "--config", config, "--listen",
                         address, "--metrics-bind-address", metrics}));
    auto channel =
        grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
    EXPECT_TRUE(channel->WaitForConnected(std::chrono::system_clock::now() +
                                          std::chrono::seconds(20)))
        << metrics << ": " << p.Output();
    EXPECT_EQ(HealthStatus(channel), 1) << metrics;
    channel.reset();  // an idle client connection would slow the drain
    p.Signal(SIGTERM);
    EXPECT_EQ(p.Wait(15000), 0) << p.Output();
    if (metrics != "0") {
      EXPECT_THAT(p.Output(), HasSubstr("cannot serve /metrics"));
    } else {
      EXPECT_THAT(p.Output(), Not(HasSubstr("/metrics")));
    }
  }
  close(holder);
  unlink(config.c_str());
}

TEST(ScorerBinaryTest, OldConnectionsAreAskedToReconnect) {
  // What lets a dns:/// client find replicas added after it connected.
  const std::string config = WriteTemp(kConfig);
  const std::string address = absl::StrCat("127.0.0.1:", testing::FreePort());
  testing::Subprocess p;
  ASSERT_TRUE(p.Start({ScorerBinary(), "--config", config, "--listen", address,
                       "--metrics-bind-address", "0",
                       "--max-connection-age-seconds", "1"}));
  auto channel =
      grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  ASSERT_TRUE(channel->WaitForConnected(std::chrono::system_clock::now() +
                                        std::chrono::seconds(20)))
      << p.Output();
  // READY until the server's GOAWAY, then the channel leaves READY.
  EXPECT_TRUE(channel->WaitForStateChange(
      GRPC_CHANNEL_READY,
      std::chrono::system_clock::now() + std::chrono::seconds(10)));
  EXPECT_NE(channel->GetState(false), GRPC_CHANNEL_READY);
  channel.reset();
  p.Signal(SIGTERM);
  EXPECT_EQ(p.Wait(15000), 0) << p.Output();
  unlink(config.c_str());
}

// The scorer's peak resident memory (VmHWM), in KiB; -1 when unreadable.
int64_t PeakRssKib(int pid) {
  std::ifstream f(absl::StrCat("/proc/", pid, "/status"));
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6));
  }
  return -1;
}

// Sends `bytes` as the body of an Evaluate call, as they are.
grpc::Status RawEvaluate(const std::shared_ptr<grpc::Channel>& channel,
                         const std::string& bytes) {
  grpc::TemplatedGenericStub<grpc::ByteBuffer, grpc::ByteBuffer> stub(channel);
  grpc::CompletionQueue cq;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  grpc::Slice slice(bytes.data(), bytes.size(), grpc::Slice::STATIC_SLICE);
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  grpc::Status status;
  auto rpc = stub.PrepareUnaryCall(&ctx, "/kscore.scorer.v1.Scorer/Evaluate",
                                   request, &cq);
  rpc->StartCall();
  rpc->Finish(&response, &status, &rpc);
  void* tag = nullptr;
  bool ok = false;
  cq.Next(&tag, &ok);
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  return status;
}

TEST(ScorerBinaryTest, OversizedRequestsAreRefusedWithoutBeingHeldInMemory) {
  const std::string config = WriteTemp(kConfig);
  const std::string address = absl::StrCat("127.0.0.1:", testing::FreePort());
  testing::Subprocess p;
  ASSERT_TRUE(p.Start({ScorerBinary(), "--config", config, "--listen", address,
                       "--metrics-bind-address", "0", "--max-request-bytes",
                       "1048576", "--grpc-memory-limit-bytes", "16777216"}));
  auto channel =
      grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  ASSERT_TRUE(channel->WaitForConnected(std::chrono::system_clock::now() +
                                        std::chrono::seconds(20)))
      << p.Output();

  // Just under the limit: the call reaches the service, which refuses the
  // batch (6000 nodes, over the default --max-batch-nodes of 5000).
  pb::EvaluateRequest under;
  under.set_profile("concentrate-scheduler");
  *under.mutable_pod() = MakePod().Name("p").Label("app", "web").Obj();
  for (int i = 0; i < 6000; ++i) {
    *under.add_nodes() =
        MakeNode().Name(absl::StrCat("node-", std::string(140, 'x'), i)).Obj();
  }
  const std::string under_bytes = under.SerializeAsString();
  ASSERT_LT(under_bytes.size(), 1048576u);
  ASSERT_GT(under_bytes.size(), 900000u);
  grpc::Status s = RawEvaluate(channel, under_bytes);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
      << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("--max-batch-nodes"));

  // One byte over: RESOURCE_EXHAUSTED, saying what the limit is.
  s = RawEvaluate(channel, std::string(1048577, '\0'));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << s.error_message();
  EXPECT_THAT(s.error_message(), HasSubstr("1048577 vs. 1048576"));

  // 256 MiB: refused before gRPC has read it all, so the scorer's peak
  // memory grows by far less than the request (gRPC checks the size only
  // once the whole message is in; --grpc-memory-limit-bytes cancels the
  // call first).
  const int64_t before = PeakRssKib(p.pid());
  ASSERT_GT(before, 0);
  constexpr size_t kHuge = size_t{256} << 20;
  s = RawEvaluate(channel, std::string(kHuge, '\0'));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << s.error_message();
  const int64_t grown = PeakRssKib(p.pid()) - before;
  ::testing::Test::RecordProperty("peak_rss_growth_kib", std::to_string(grown));
  EXPECT_LT(grown, static_cast<int64_t>(kHuge / 1024 / 2))
      << "peak RSS grew by " << grown << " KiB for a " << kHuge / 1024
      << " KiB request";

  // And the scorer still answers.
  pb::EvaluateRequest ok = under;
  ok.mutable_nodes()->DeleteSubrange(10, ok.nodes_size() - 10);
  s = RawEvaluate(channel, ok.SerializeAsString());
  EXPECT_TRUE(s.ok()) << s.error_message();
  channel.reset();
  p.Signal(SIGTERM);
  EXPECT_EQ(p.Wait(15000), 0) << p.Output();
  unlink(config.c_str());
}

TEST(ScorerBinaryTest, BadSizeLimitsExitNonZeroNamingTheFlag) {
  const std::string config = WriteTemp(kConfig);
  struct Case {
    std::vector<std::string> flags;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {{"--max-request-bytes", "0"},
            "--max-request-bytes must be between 1 and 2147483647, got 0"},
           {{"--max-request-bytes", "4294967296"},
            "--max-request-bytes must be between 1 and 2147483647, got "
            "4294967296"},
           {{"--max-request-bytes", "1048576", "--grpc-memory-limit-bytes",
             "1000"},
            "--grpc-memory-limit-bytes (1000) must be at least "
            "--max-request-bytes (1048576)"},
           {{"--max-plan-bytes", "0"},
            "--max-plan-bytes must be greater than 0, got 0"},
           {{"--max-request-work", "-1"},
            "--max-request-work must be greater than 0, got -1"}}) {
    std::vector<std::string> argv = {ScorerBinary(), "--config", config,
                                     "--listen", "127.0.0.1:0"};
    argv.insert(argv.end(), c.flags.begin(), c.flags.end());
    testing::Subprocess p;
    ASSERT_TRUE(p.Start(argv));
    EXPECT_EQ(p.Wait(10000), 2) << p.Output();
    EXPECT_THAT(p.Output(), HasSubstr(c.message));
  }
  unlink(config.c_str());
}

TEST_F(ScorerServerTest, HealthSaysServing) {
  EXPECT_EQ(HealthStatus(channel_), 1);  // grpc.health.v1 SERVING
}

TEST_F(ScorerServerTest, SigtermDrainsAndExitsZero) {
  stub_.reset();
  channel_.reset();
  ASSERT_TRUE(scorer_->Signal(SIGTERM));
  EXPECT_EQ(scorer_->Wait(15000), 0) << scorer_->Output();
  EXPECT_THAT(scorer_->Output(), HasSubstr("draining"));
}

TEST(ScorerBinaryTest, InvalidConfigExitsNonZeroNamingTheField) {
  std::string bad = std::string(KSCORE_SOURCE_DIR) +
                    "/tests/testdata/config/bad/bad_label_key.yaml";
  testing::Subprocess p;
  ASSERT_TRUE(
      p.Start({ScorerBinary(), "--config", bad, "--listen", "127.0.0.1:0"}));
  EXPECT_EQ(p.Wait(10000), 1);
  EXPECT_THAT(p.Output(),
              HasSubstr("profiles[0].pluginConfig[0].args.labelKey: "
                        "invalid label key \"a b\""));
}

TEST(ScorerBinaryTest, MissingConfigFlagExitsNonZero) {
  testing::Subprocess p;
  ASSERT_TRUE(p.Start({ScorerBinary(), "--listen", "127.0.0.1:0"}));
  EXPECT_EQ(p.Wait(10000), 2);
  EXPECT_THAT(p.Output(), HasSubstr("--config is required"));
}

}  // namespace
}  // namespace kscore
