// The scorer fused call end to end, as one scheduling cycle of the shim runs
// it: candidates appended from a 5000-node cache, the request sent with the
// shim's ScorerClient to a real ScorerService on 127.0.0.1, the response
// decoded onto the cycle's arena. Both sides live in this process, so the
// process CPU time per cycle (cpu_per_cycle, all threads: gRPC's included)
// is what one pod's scoring costs the machine, client and server together.
#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "benchmark/benchmark.h"
#include "grpcpp/grpcpp.h"
#include "nlohmann/json.hpp"
#include "scorer/framework/profile_set.h"
#include "scorer/plugins/registry.h"
#include "scorer/server/scorer_service.h"
#include "shim/cache/cache.h"
#include "shim/objects/objects.h"
#include "shim/scheduler/cycle.h"
#include "shim/scheduler/explain.h"
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

// User + system CPU seconds of another process (/proc/PID/stat), 0 if
// pid is 0 or unreadable.
double ProcessCpuSeconds(int pid) {
  if (pid == 0) return 0;
  std::ifstream f(absl::StrCat("/proc/", pid, "/stat"));
  std::string stat((std::istreambuf_iterator<char>(f)),
                   std::istreambuf_iterator<char>());
  // Fields after the command name (which may hold spaces): state is the
  // 3rd field, utime the 14th, stime the 15th.
  const size_t close = stat.rfind(')');
  if (close == std::string::npos) return 0;
  std::vector<std::string> fields = absl::StrSplit(stat.substr(close + 2), ' ');
  double utime = 0, stime = 0;
  if (fields.size() < 13 || !absl::SimpleAtod(fields[11], &utime) ||
      !absl::SimpleAtod(fields[12], &stime)) {
    return 0;
  }
  return (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// A pod as hack/bench.sh creates them: 100m / 500Mi, app label of its group.
objects::PodInfo Pod(int i, const std::string& node) {
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
  return *objects::PodFromJson(pod);
}

// detail: 1 asks for DETAIL_TOTALS (what the shim does), 0 for DETAIL_FULL.
void BM_EvaluateCycle(benchmark::State& state) {
  const int candidates = static_cast<int>(state.range(0));
  const bool totals = state.range(1) != 0;
  auto cfg = model::ParseSchedulerConfig(kStage1);
  auto profiles =
      *framework::BuildProfileSet(*std::move(cfg), plugins::DefaultRegistry());
  server::ScorerService service(profiles.get(), server::ServiceOptions{});
  // KSCORE_CYCLE_SCORER=ADDR[,PID]: call a scorer binary already running
  // there instead (two processes, as deployed); with its PID, its CPU time
  // per cycle is reported too (scorer_cpu_per_cycle).
  const char* external = std::getenv("KSCORE_CYCLE_SCORER");
  std::string target;
  int scorer_pid = 0;
  std::unique_ptr<grpc::Server> srv;
  if (external != nullptr && *external != '\0') {
    std::vector<std::string> parts = absl::StrSplit(external, ',');
    target = parts[0];
    if (parts.size() > 1 && !absl::SimpleAtoi(parts[1], &scorer_pid)) {
      state.SkipWithError("KSCORE_CYCLE_SCORER: bad PID");
      return;
    }
  } else {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                             &port);
    builder.RegisterService(&service);
    srv = builder.BuildAndStart();
    target = absl::StrCat("127.0.0.1:", port);
  }
  auto client = *scorer_client::ScorerClient::Create({.target = target});

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
  const objects::PodInfo incoming = Pod(1234567, "");
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
  const double scorer_cpu0 = ProcessCpuSeconds(scorer_pid);
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
  if (scorer_pid != 0) {
    state.counters["scorer_cpu_per_cycle"] =
        benchmark::Counter(ProcessCpuSeconds(scorer_pid) - scorer_cpu0,
                           benchmark::Counter::kAvgIterations);
  }
  const auto& s = client->stats();
  state.counters["wire_bytes"] = benchmark::Counter(
      static_cast<double>(s.request_bytes + s.response_bytes),
      benchmark::Counter::kAvgIterations);
  if (srv != nullptr) srv->Shutdown();
}
BENCHMARK(BM_EvaluateCycle)
    ->ArgNames({"nodes", "totals"})
    ->Args({500, 1})
    ->Args({500, 0})
    ->UseRealTime();

// The shim's whole cycle (RunCycle: request built, Evaluate on loopback,
// answer read, host picked) for 500 of 5000 nodes, with the decision kept
// for kubectl kscore explain or not: explain 0 (--explain-decisions=0), 5
// (the default: the 5 best nodes' breakdown, in a log of 1000) or -1
// (--record-scores: every feasible node and rejection).
void BM_ShimCycle(benchmark::State& state) {
  const int32_t explain = static_cast<int32_t>(state.range(0));
  auto cfg = model::ParseSchedulerConfig(kStage1);
  auto profiles =
      *framework::BuildProfileSet(*std::move(cfg), plugins::DefaultRegistry());
  server::ScorerService service(
      profiles.get(), server::ServiceOptions{.replica = "bench-scorer:50051"});
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                           &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> srv = builder.BuildAndStart();
  auto client = *scorer_client::ScorerClient::Create(
      {.target = absl::StrCat("127.0.0.1:", port)});
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
  scheduler::ProfileInfo profile;
  profile.scheduler_name = "concentrate-scheduler";
  profile.label_count_keys = {"app"};
  profile.node_labels = pb::NODE_LABELS_NEVER;
  profile.filter_plugins = {"NodeUnschedulable", "NodeName",
                            "TaintToleration",   "NodeAffinity",
                            "NodePorts",         "NodeResourcesFit"};
  std::mt19937_64 rng(1);
  scheduler::DecisionLog log(1000);
  size_t start = 0, bytes = 0, kept = 0;
  std::vector<objects::PodInfo> pods;
  for (int i = 0; i < 64; ++i) pods.push_back(Pod(2000000 + i * 10, ""));
  int i = 0;
  const double cpu0 = CpuSeconds();
  for (auto _ : state) {
    const objects::PodInfo& pod = pods[static_cast<size_t>(i++) % pods.size()];
    scheduler::CycleResult r =
        scheduler::RunCycle({.pod = &pod,
                             .profile = &profile,
                             .cache = &c,
                             .start = start,
                             .rng = &rng,
                             .explain_top = explain,
                             .explain_rejections = explain < 0},
                            *client);
    if (!r.ok()) {
      state.SkipWithError(r.failure->message.c_str());
      break;
    }
    start = r.next_start.value_or(0);
    if (r.explanation != nullptr) {
      if (explain < 0) {
        benchmark::DoNotOptimize(
            scheduler::SimulatorAnnotations(*r.explanation));
        r.explanation = std::make_shared<scheduler::Explanation>(
            scheduler::Trimmed(*r.explanation, 5));
      }
      bytes += scheduler::ExplanationBytes(*r.explanation);
      ++kept;
      log.Add(std::move(r.explanation));
    }
  }
  state.counters["cpu_per_cycle"] = benchmark::Counter(
      CpuSeconds() - cpu0, benchmark::Counter::kAvgIterations);
  if (kept > 0) {
    state.counters["bytes_per_decision"] =
        static_cast<double>(bytes) / static_cast<double>(kept);
  }
  const auto& s = client->stats();
  state.counters["wire_bytes"] = benchmark::Counter(
      static_cast<double>(s.request_bytes + s.response_bytes),
      benchmark::Counter::kAvgIterations);
  srv->Shutdown();
}
BENCHMARK(BM_ShimCycle)
    ->ArgName("explain")
    ->Arg(0)
    ->Arg(5)
    ->Arg(-1)
    ->UseRealTime();

}  // namespace
}  // namespace kscore

BENCHMARK_MAIN();
