// Micro-benchmarks of the scorer's hot path: Concentrate's Score per node, and
// the fused Evaluate call over a batch of nodes, in-process and over gRPC on
// loopback.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "grpcpp/grpcpp.h"
#include "scorer/framework/profile_set.h"
#include "scorer/plugins/concentrate.h"
#include "scorer/plugins/registry.h"
#include "scorer/server/scorer_service.h"
#include "scorer/testing/wrappers.h"

namespace kscore {
namespace {

namespace pb = ::kscore::scorer::v1;
using ::kscore::testing::MakeNode;
using ::kscore::testing::MakePod;

constexpr char kStage1[] = R"(apiVersion: kubescheduler.config.k8s.io/v1
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
)";

// Nodes shaped like the local cluster's: a few labels, capacity, some load.
std::vector<pb::Node> Nodes(int n) {
  std::vector<pb::Node> nodes;
  nodes.reserve(n);
  for (int i = 0; i < n; ++i) {
    nodes.push_back(
        MakeNode()
            .Name(absl::StrCat("node-", i))
            .Label("kubernetes.io/hostname", absl::StrCat("node-", i))
            .Label("topology.kubernetes.io/zone", absl::StrCat("zone-", i % 3))
            .Label("kubernetes.io/os", "linux")
            .Requested(100 * (i % 20), (int64_t{256} << 20) * (i % 3 + 1))
            .PodCount(i % 20)
            .LabelCount("app", "web", i % 7)
            .Obj());
  }
  return nodes;
}

pb::Pod Pod() {
  return MakePod().Name("web-1").Label("app", "web").Req(100, 128 << 20).Obj();
}

std::unique_ptr<framework::ProfileSet> Profiles() {
  auto cfg = model::ParseSchedulerConfig(kStage1);
  auto set =
      framework::BuildProfileSet(*std::move(cfg), plugins::DefaultRegistry());
  return *std::move(set);
}

void PerNode(benchmark::State& state, int64_t nodes) {
  state.SetItemsProcessed(state.iterations() * nodes);
  // Seconds per node (shown with an SI prefix, e.g. "7.5n").
  state.counters["per_node"] =
      benchmark::Counter(static_cast<double>(nodes),
                         benchmark::Counter::kIsIterationInvariantRate |
                             benchmark::Counter::kInvert);
}

void BM_ConcentrateScore(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  plugins::Concentrate plugin(plugins::Concentrate::Args{});
  std::vector<pb::Node> nodes = Nodes(n);
  std::vector<const pb::Node*> ptrs;
  for (const pb::Node& node : nodes) ptrs.push_back(&node);
  pb::Pod pod = Pod();
  framework::CycleState cycle;
  plugin.PreScore(cycle, pod, ptrs);
  std::vector<int64_t> scores(n);
  for (auto _ : state) {
    plugin.Score(cycle, pod, ptrs, absl::MakeSpan(scores));
    plugin.NormalizeScore(cycle, pod, absl::MakeSpan(scores));
    benchmark::DoNotOptimize(scores.data());
  }
  PerNode(state, n);
}
BENCHMARK(BM_ConcentrateScore)->Arg(500)->Arg(5000);

void BM_EvaluateInProcess(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  auto profiles = Profiles();
  const framework::Profile* profile = profiles->Find("concentrate-scheduler");
  std::vector<pb::Node> nodes = Nodes(n);
  std::vector<const pb::Node*> ptrs;
  for (const pb::Node& node : nodes) ptrs.push_back(&node);
  pb::Pod pod = Pod();
  for (auto _ : state) {
    framework::CycleState cycle;
    auto ev = profile->Evaluate(cycle, pod, ptrs, true);
    if (!ev.ok() || ev->feasible.size() != static_cast<size_t>(n)) {
      state.SkipWithError("Evaluate failed");
      break;
    }
    benchmark::DoNotOptimize(ev->scores.total.data());
  }
  PerNode(state, n);
}
BENCHMARK(BM_EvaluateInProcess)->Arg(500);

// What the scorer does with an Evaluate request before any plugin runs:
// decode it (as the shim encodes it: each node with allocatable, requested
// and non-zero requested resources; labels only when a plugin reads them)
// onto a per-call arena.
void BM_DecodeEvaluateRequest(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const bool labels = state.range(1) != 0;
  pb::EvaluateRequest req;
  req.set_profile("concentrate-scheduler");
  *req.mutable_pod() = Pod();
  for (pb::Node& node : Nodes(n)) {
    *node.mutable_non_zero_requested() = node.requested();
    if (!labels) node.clear_labels();
    *req.add_nodes() = std::move(node);
  }
  const std::string bytes = req.SerializeAsString();
  for (auto _ : state) {
    google::protobuf::ArenaOptions o;
    o.start_block_size = 8 << 10;
    o.max_block_size = 64 << 10;
    google::protobuf::Arena arena(o);
    auto* r =
        google::protobuf::Arena::CreateMessage<pb::EvaluateRequest>(&arena);
    if (!r->ParseFromString(bytes) || r->nodes_size() != n) {
      state.SkipWithError("decode failed");
      break;
    }
    benchmark::DoNotOptimize(r);
  }
  state.counters["request_bytes"] = static_cast<double>(bytes.size());
  PerNode(state, n);
}
BENCHMARK(BM_DecodeEvaluateRequest)
    ->ArgNames({"nodes", "labels"})
    ->Args({500, 0})
    ->Args({500, 1});

// The same call through a real gRPC server on 127.0.0.1 (encode, loopback
// TCP, decode, evaluate, encode, decode).
void BM_EvaluateGrpcLoopback(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  auto profiles = Profiles();
  server::ScorerService service(profiles.get(), server::ServiceOptions{});
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                           &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> srv = builder.BuildAndStart();
  auto stub = pb::Scorer::NewStub(grpc::CreateChannel(
      absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials()));
  pb::EvaluateRequest req;
  req.set_profile("concentrate-scheduler");
  *req.mutable_pod() = Pod();
  for (pb::Node& node : Nodes(n)) *req.add_nodes() = std::move(node);
  state.counters["request_bytes"] = static_cast<double>(req.ByteSizeLong());
  for (auto _ : state) {
    grpc::ClientContext ctx;
    pb::EvaluateResponse resp;
    grpc::Status st = stub->Evaluate(&ctx, req, &resp);
    if (!st.ok() || resp.scores_size() != n) {
      state.SkipWithError("Evaluate RPC failed");
      break;
    }
  }
  PerNode(state, n);
  srv->Shutdown();
}
BENCHMARK(BM_EvaluateGrpcLoopback)->Arg(500)->UseRealTime();

}  // namespace
}  // namespace kscore

BENCHMARK_MAIN();
