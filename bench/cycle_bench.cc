// The scorer fused call end to end, as one scheduling cycle of the shim runs
// it: candidates appended from a 5000-node cache, the request sent with the
// shim's ScorerClient to a real ScorerService on 127.0.0.1, the response
// decoded onto the cycle's arena. Both sides live in this process, so the
// process CPU time per cycle (cpu_per_cycle, all threads: gRPC's included)
// is what one pod's scoring costs the machine, client and server together.
#include <sys/resource.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "grpcpp/grpcpp.h"
#include "nlohmann/json.hpp"
#include "scorer/framework/profile_set.h"
#include "scorer/plugins/registry.h"
#include "scorer/server/scorer_service.h"
#include "shim/cache/cache.h"
#include "shim/cache/objects.h"
#include "shim/scorer_client/scorer_client.h"

namespace kscore {
namespace {

namespace pb = ::kscore::scorer::v1;

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

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// A pod as hack/bench.sh creates them: 100m / 500Mi, app label of its group.
cache::PodInfo Pod(int i, const std::string& node) {
  nlohmann::json pod = {
      {"metadata",
       {{"name", absl::StrCat("p-", i)},
        {"namespace", "default"},
        {"uid", absl::StrCat("uid-", i)},
        {"labels", {{"app", absl::StrCat("g-", i / 10)}}}}},
      {"spec",
       {{"schedulerName", "concentrate-scheduler"},
        {"containers",
         {{{"name", "pause"},
           {"resources",
            {{"requests", {{"cpu", "100m"}, {"memory", "500Mi"}}}}}}}}}},
      {"status", {{"phase", "Pending"}}}};
  if (!node.empty()) pod["spec"]["nodeName"] = node;
  return *cache::PodFromJson(pod);
}

// detail: 1 asks for DETAIL_TOTALS (what the shim does), 0 for DETAIL_FULL.
void BM_EvaluateCycle(benchmark::State& state) {
  const int candidates = static_cast<int>(state.range(0));
  const bool totals = state.range(1) != 0;
  auto cfg = framework::ParseSchedulerConfig(kStage1);
  auto profiles =
      *framework::BuildProfileSet(*std::move(cfg), plugins::DefaultRegistry());
  server::ScorerService service(profiles.get(), server::ServiceOptions{});
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                           &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> srv = builder.BuildAndStart();
  auto client = *scorer_client::ScorerClient::Create(
      {.target = absl::StrCat("127.0.0.1:", port)});

  // 5000 nodes (4 CPU, 16 GiB) with 2 bound pods each, as in the benchmark.
  cache::Cache c;
  for (int i = 0; i < 5000; ++i) {
    pb::Node n;
    n.set_name(absl::StrCat("bench-node-", 10000 + i));
    n.mutable_allocatable()->set_milli_cpu(4000);
    n.mutable_allocatable()->set_memory(int64_t{16} << 30);
    n.mutable_allocatable()->set_pods(110);
    c.UpsertNode(n);
  }
  for (int k = 0; k < 10000; ++k) {
    c.UpsertAssignedPod(Pod(k, absl::StrCat("bench-node-", 10000 + k / 2)));
  }
  const cache::PodInfo incoming = Pod(1234567, "");
  const std::vector<std::string> keys = {"app"};
  std::string head;
  {
    pb::EvaluateRequest h;
    h.set_profile("concentrate-scheduler");
    *h.mutable_pod() = incoming.pod;
    h.set_detail(totals ? pb::DETAIL_TOTALS : pb::DETAIL_FULL);
    h.SerializeToString(&head);
  }
  size_t start = 0;
  const double cpu0 = CpuSeconds();
  for (auto _ : state) {
    google::protobuf::Arena arena;
    std::vector<std::string> requests(1, head);
    std::vector<std::string> names;
    c.AppendCandidates(incoming, keys, start, candidates, false,
                       pb::EvaluateRequest::kNodesFieldNumber, &requests[0],
                       &names);
    start += candidates;
    auto results = client->EvaluateAll(requests, &arena);
    if (!results[0].ok() ||
        (totals ? (*results[0])->totals_size()
                : (*results[0])->scores_size()) != candidates) {
      state.SkipWithError("Evaluate failed or lost nodes");
      break;
    }
    benchmark::DoNotOptimize(*results[0]);
  }
  state.counters["cpu_per_cycle"] = benchmark::Counter(
      CpuSeconds() - cpu0, benchmark::Counter::kAvgIterations);
  const auto& s = client->stats();
  state.counters["wire_bytes"] = benchmark::Counter(
      static_cast<double>(s.request_bytes + s.response_bytes),
      benchmark::Counter::kAvgIterations);
  srv->Shutdown();
}
BENCHMARK(BM_EvaluateCycle)
    ->ArgNames({"nodes", "totals"})
    ->Args({500, 1})
    ->Args({500, 0})
    ->UseRealTime();

}  // namespace
}  // namespace kscore

BENCHMARK_MAIN();
