// scorer_load: drives a running scorer's Evaluate from many concurrent
// callers, as a busy shim (or several) would, and reports throughput,
// latency and the scorer's memory (bench/scorer_load.sh runs it).
//
// The requests are the shim's own: a 5000-node cache (cache::Cache) with
// bound pods, the profiles learnt from the scorer (ListProfiles), the pod's
// plan asked of the scorer (Plan) and answered from the cache, the request
// head and the candidates appended as scheduler/cycle.cc does. A pool of
// such requests (pods of three kinds, batches of --min-nodes..--max-nodes
// candidates) is built once, encoded, then sent round robin.
//
// --concurrency calls stay in flight (gRPC's async API, one completion queue
// per client thread) for --rounds rounds of --duration-seconds each, at most
// --max-requests per round. After each round the in-flight calls finish and
// the scorer's VmRSS is read (/proc/PID/status), so RSS after round 2 close
// to RSS after round 1 says memory does not grow with the calls served.
// Then the size limits: requests larger than the scorer's
// --max-request-bytes (one node over, and --oversized-bytes) must come back
// RESOURCE_EXHAUSTED, and a batch larger than its --max-batch-nodes
// INVALID_ARGUMENT, quickly; the scorer's RSS before, at most and after
// each is reported (bounded by its --grpc-memory-limit-bytes, not by the
// request's size).
//
// Exits 0 when every call answered as expected, 1 otherwise; the figures go
// to stdout and, as JSON, to --out.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/marshalling.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/flags.h"
#include "google/protobuf/arena.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/grpcpp.h"
#include "kscore/scorer/v1/scorer.grpc.pb.h"
#include "nlohmann/json.hpp"
#include "shim/cache/cache.h"
#include "shim/objects/objects.h"
#include "shim/scheduler/cycle.h"
#include "shim/scheduler/profiles.h"
#include "shim/scorer_client/scorer_client.h"

ABSL_FLAG(std::string, target, "", "The scorer's address, host:port");
ABSL_FLAG(int, scorer_pid, 0,
          "The scorer's process id, for its RSS and CPU (0: not reported)");
ABSL_FLAG(int, concurrency, 64, "Calls in flight at any time");
ABSL_FLAG(int, client_threads, 1,
          "Threads driving the calls (each its completion queue)");
ABSL_FLAG(int, duration_seconds, 60, "Length of one round");
ABSL_FLAG(int, rounds, 2, "Rounds; the scorer's RSS is read after each");
ABSL_FLAG(int64_t, max_requests, 2000000,
          "Most calls in one round (the round ends early when reached)");
ABSL_FLAG(int, min_nodes, 100, "Fewest candidate nodes in one request");
ABSL_FLAG(int, max_nodes, 500, "Most candidate nodes in one request");
ABSL_FLAG(int, cluster_nodes, 5000, "Nodes in the shim's cache");
ABSL_FLAG(int, pool, 48, "Distinct requests built and sent in turn");
ABSL_FLAG(int64_t, max_request_bytes, int64_t{64} << 20,
          "The scorer's --max-request-bytes: the oversized request is "
          "one node larger (0: skip that check)");
ABSL_FLAG(std::vector<std::string>, oversized_bytes,
          std::vector<std::string>({"0", "268435456"}),
          "Sizes of the oversized requests sent, comma-separated; 0 is one "
          "node over --max-request-bytes");
ABSL_FLAG(int, max_batch_nodes, 5000,
          "The scorer's --max-batch-nodes: the too-large batch has one node "
          "more (0: skip that check)");
ABSL_FLAG(int, limit_calls, 5, "Calls made for each size-limit check");
ABSL_FLAG(std::string, out, "", "Write the figures as JSON to this file");

namespace kscore {
namespace {

namespace pb = ::kscore::scorer::v1;
using Clock = std::chrono::steady_clock;

constexpr char kEvaluateMethod[] = "/kscore.scorer.v1.Scorer/Evaluate";

// Status lines of /proc/PID/status (VmRSS, VmHWM), in KiB; 0 when unknown.
int64_t ProcStatusKib(int pid, const char* field) {
  if (pid <= 0) return 0;
  std::ifstream f(absl::StrCat("/proc/", pid, "/status"));
  for (std::string line; std::getline(f, line);) {
    if (line.rfind(field, 0) != 0) continue;
    int64_t kib = 0;
    std::vector<std::string> parts =
        absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (parts.size() >= 2 && absl::SimpleAtoi(parts[1], &kib)) return kib;
  }
  return 0;
}

// User + system CPU seconds of a process (/proc/PID/stat), 0 when unknown.
double ProcessCpuSeconds(int pid) {
  std::ifstream f(pid > 0 ? absl::StrCat("/proc/", pid, "/stat")
                          : std::string("/proc/self/stat"));
  std::string stat((std::istreambuf_iterator<char>(f)),
                   std::istreambuf_iterator<char>());
  // The fields after the command name (which may hold spaces): utime is the
  // 14th field of the line, stime the 15th.
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

// ------------------------------------------------------------------ cluster

// A node as bench/binder and hack/cluster.sh create them, in three zones.
pb::Node MakeNode(int i) {
  pb::Node n;
  const std::string name = absl::StrCat("load-node-", i);
  n.set_name(name);
  auto& l = *n.mutable_labels();
  l["kubernetes.io/hostname"] = name;
  l["kubernetes.io/os"] = "linux";
  l["kubernetes.io/arch"] = "amd64";
  l["topology.kubernetes.io/zone"] = absl::StrCat("zone-", i % 3);
  n.mutable_allocatable()->set_milli_cpu(4000);
  n.mutable_allocatable()->set_memory(int64_t{16} << 30);
  n.mutable_allocatable()->set_pods(110);
  return n;
}

// The pod kinds the requests carry: scheduler_perf's basic pod (100m /
// 500Mi, groups of 10 sharing an app label) under each profile, and the
// spread/anti-affinity shapes' pod (a zone spread constraint, maxSkew 5,
// and required hostname anti-affinity on its own app) under the stock one.
enum class Kind { kBasic, kConstrained };

nlohmann::json PodJson(Kind kind, int i, const std::string& scheduler,
                       const std::string& node) {
  const std::string app = kind == Kind::kBasic ? absl::StrCat("g-", i / 10)
                                               : absl::StrCat("app-", i % 100);
  nlohmann::json pod = {
      {"metadata",
       {{"name", absl::StrCat("p-", i)},
        {"namespace", "default"},
        {"uid", absl::StrCat("00000000-0000-0000-0000-", 100000000000 + i)},
        {"labels", {{"app", app}}}}},
      {"spec",
       {{"schedulerName", scheduler},
        {"containers",
         {{{"name", "pause"},
           {"resources",
            {{"requests", {{"cpu", "100m"}, {"memory", "500Mi"}}}}}}}}}},
      {"status", {{"phase", node.empty() ? "Pending" : "Running"}}}};
  if (kind == Kind::kConstrained) {
    const nlohmann::json selector = {{"matchLabels", {{"app", app}}}};
    pod["spec"]["topologySpreadConstraints"] = {
        {{"maxSkew", 5},
         {"topologyKey", "topology.kubernetes.io/zone"},
         {"whenUnsatisfiable", "DoNotSchedule"},
         {"labelSelector", selector}}};
    pod["spec"]["affinity"] = {
        {"podAntiAffinity",
         {{"requiredDuringSchedulingIgnoredDuringExecution",
           {{{"topologyKey", "kubernetes.io/hostname"},
             {"labelSelector", selector}}}}}}};
  }
  if (!node.empty()) pod["spec"]["nodeName"] = node;
  return pod;
}

absl::StatusOr<objects::PodInfo> MakePod(Kind kind, int i,
                                         const std::string& scheduler,
                                         const std::string& node) {
  return objects::PodFromJson(PodJson(kind, i, scheduler, node));
}

// ------------------------------------------------------------------ requests

struct Request {
  std::string bytes;
  int nodes = 0;
  std::string profile = {};
};

// The pool of encoded requests, built as the shim's cycle builds them.
absl::StatusOr<std::vector<Request>> BuildPool(
    scorer_client::ScorerClient& client, const cache::Cache& c,
    int cluster_nodes) {
  absl::StatusOr<pb::ListProfilesResponse> listed = client.ListProfiles();
  if (!listed.ok()) return listed.status();
  std::vector<std::string> served;
  for (const auto& p : listed->profiles()) served.push_back(p.scheduler_name());
  // The pod kinds, by the profiles the scorer serves: Concentrate's basic
  // pod, and the stock profile's basic and constrained pods.
  struct Shape {
    Kind kind;
    std::string profile;
  };
  std::vector<Shape> shapes;
  for (const std::string& s : served) {
    if (s == "concentrate-scheduler") shapes.push_back({Kind::kBasic, s});
    if (s == "kscore-default") {
      shapes.push_back({Kind::kBasic, s});
      shapes.push_back({Kind::kConstrained, s});
    }
  }
  if (shapes.empty()) {
    return absl::FailedPreconditionError(
        "the scorer serves neither concentrate-scheduler nor kscore-default "
        "(bench/scorer_load.sh writes a configuration with both)");
  }
  scheduler::Profiles profiles({.served = served, .on_check = nullptr},
                               [&client] { return client.ListProfiles(); });
  scheduler::PlanCache plans;
  std::mt19937_64 rng(18);
  std::uniform_int_distribution<int> size(absl::GetFlag(FLAGS_min_nodes),
                                          absl::GetFlag(FLAGS_max_nodes));
  std::vector<Request> pool;
  size_t start = 0;
  for (int i = 0; i < absl::GetFlag(FLAGS_pool); ++i) {
    const Shape& shape = shapes[static_cast<size_t>(i) % shapes.size()];
    absl::StatusOr<std::shared_ptr<const scheduler::ProfileInfo>> info =
        profiles.Lookup(shape.profile);
    if (!info.ok()) return info.status();
    absl::StatusOr<objects::PodInfo> pod =
        MakePod(shape.kind, 10000000 + i, shape.profile, "");
    if (!pod.ok()) return pod.status();
    scheduler::CycleInput in;
    in.pod = &*pod;
    in.profile = info->get();
    in.cache = &c;
    in.plans = &plans;
    absl::StatusOr<scheduler::CyclePlan> plan =
        scheduler::PrepareCycle(in, client);
    if (!plan.ok()) return plan.status();
    Request r;
    r.profile = shape.profile;
    r.nodes = size(rng);
    // The shim's own request: its head, then the window's candidates.
    const size_t got = scheduler::EvaluateRequests(in, *plan).Window(
        "", start, static_cast<size_t>(r.nodes), &r.bytes, nullptr);
    if (got != static_cast<size_t>(r.nodes)) {
      return absl::InternalError(
          absl::StrCat("AppendCandidates gave ", got, " nodes of ", r.nodes));
    }
    start = (start + got) % static_cast<size_t>(cluster_nodes);
    pool.push_back(std::move(r));
  }
  return pool;
}

// Whether an answer accounts for every candidate: each node either rejected
// or feasible with a total.
bool Complete(const pb::EvaluateResponse& resp, int nodes) {
  if (resp.status().code() != pb::CODE_SUCCESS) return false;
  return resp.rejected_size() + resp.totals_size() == nodes;
}

// ------------------------------------------------------------------ load

using RawStub = grpc::TemplatedGenericStub<grpc::ByteBuffer, grpc::ByteBuffer>;

// One call in flight: its slot is reused for the next call.
struct Slot {
  std::unique_ptr<grpc::ClientContext> ctx;
  std::unique_ptr<grpc::ClientAsyncResponseReader<grpc::ByteBuffer>> rpc;
  grpc::ByteBuffer request;
  grpc::ByteBuffer response;
  grpc::Status status;
  size_t which = 0;  // index into the pool
  Clock::time_point started;
};

struct Tally {
  int64_t calls = 0;
  int64_t nodes = 0;
  int64_t incomplete = 0;  // OK but not accounting for every node
  std::map<std::string, int64_t> errors;  // by code and message
  std::vector<uint32_t> micros;           // latency of each call
};

// One client thread's share of the round: `slots` calls kept in flight on
// its own completion queue until `end` or the shared request budget runs
// out, then the calls in flight are waited for.
void Drive(RawStub& stub, const std::vector<Request>& pool, int slots,
           Clock::time_point end, std::atomic<int64_t>& budget,
           std::atomic<size_t>& next, Tally& tally) {
  grpc::CompletionQueue cq;
  std::vector<Slot> calls(static_cast<size_t>(slots));
  auto issue = [&](Slot& s) {
    if (Clock::now() >= end || budget.fetch_sub(1) <= 0) return false;
    s.which = next.fetch_add(1) % pool.size();
    const std::string& bytes = pool[s.which].bytes;
    grpc::Slice slice(bytes.data(), bytes.size(), grpc::Slice::STATIC_SLICE);
    s.request = grpc::ByteBuffer(&slice, 1);
    s.response.Clear();
    s.ctx = std::make_unique<grpc::ClientContext>();
    s.ctx->set_deadline(std::chrono::system_clock::now() +
                        std::chrono::seconds(30));
    s.started = Clock::now();
    s.rpc = stub.PrepareUnaryCall(s.ctx.get(), kEvaluateMethod, s.request, &cq);
    s.rpc->StartCall();
    s.rpc->Finish(&s.response, &s.status, &s);
    return true;
  };
  int in_flight = 0;
  for (Slot& s : calls) in_flight += issue(s) ? 1 : 0;
  void* tag = nullptr;
  bool ok = false;
  while (in_flight > 0 && cq.Next(&tag, &ok)) {
    Slot& s = *static_cast<Slot*>(tag);
    --in_flight;
    const auto took = std::chrono::duration_cast<std::chrono::microseconds>(
        Clock::now() - s.started);
    const Request& r = pool[s.which];
    ++tally.calls;
    tally.micros.push_back(static_cast<uint32_t>(took.count()));
    if (!s.status.ok()) {
      ++tally.errors[absl::StrCat(s.status.error_code(), ": ",
                                  s.status.error_message())];
    } else {
      // Decoded as the shim decodes it, onto an arena.
      google::protobuf::Arena arena;
      auto* resp =
          google::protobuf::Arena::CreateMessage<pb::EvaluateResponse>(&arena);
      std::vector<grpc::Slice> slices;
      std::string wire;
      if (s.response.Dump(&slices).ok()) {
        for (const grpc::Slice& sl : slices) {
          wire.append(reinterpret_cast<const char*>(sl.begin()), sl.size());
        }
      }
      if (resp->ParseFromString(wire) && Complete(*resp, r.nodes)) {
        tally.nodes += r.nodes;
      } else {
        ++tally.incomplete;
      }
    }
    in_flight += issue(s) ? 1 : 0;
  }
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
}

double Percentile(std::vector<uint32_t>& v, double p) {
  if (v.empty()) return 0;
  const size_t k =
      std::min(v.size() - 1,
               static_cast<size_t>(p / 100.0 * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(k), v.end());
  return v[k] / 1000.0;
}

nlohmann::json RunRound(int round, RawStub& stub,
                        const std::vector<Request>& pool, int scorer_pid) {
  const int concurrency = absl::GetFlag(FLAGS_concurrency);
  const int threads =
      std::max(1, std::min(absl::GetFlag(FLAGS_client_threads), concurrency));
  std::atomic<int64_t> budget(absl::GetFlag(FLAGS_max_requests));
  std::atomic<size_t> next(0);
  std::vector<Tally> tallies(static_cast<size_t>(threads));
  const double scorer_cpu0 = ProcessCpuSeconds(scorer_pid);
  const double client_cpu0 = ProcessCpuSeconds(0);
  const auto t0 = Clock::now();
  const auto end =
      t0 + std::chrono::seconds(absl::GetFlag(FLAGS_duration_seconds));
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    const int slots =
        concurrency / threads + (t < concurrency % threads ? 1 : 0);
    workers.emplace_back(Drive, std::ref(stub), std::cref(pool), slots, end,
                         std::ref(budget), std::ref(next),
                         std::ref(tallies[static_cast<size_t>(t)]));
  }
  for (std::thread& w : workers) w.join();
  const double seconds =
      std::chrono::duration<double>(Clock::now() - t0).count();
  Tally all;
  for (Tally& t : tallies) {
    all.calls += t.calls;
    all.nodes += t.nodes;
    all.incomplete += t.incomplete;
    for (const auto& [k, v] : t.errors) all.errors[k] += v;
    all.micros.insert(all.micros.end(), t.micros.begin(), t.micros.end());
  }
  int64_t errors = 0;
  for (const auto& [_, v] : all.errors) errors += v;
  nlohmann::json out = {
      {"round", round},
      {"seconds", seconds},
      {"calls", all.calls},
      {"errors", errors},
      {"error_kinds", all.errors},
      {"incomplete", all.incomplete},
      {"requests_per_s", static_cast<double>(all.calls) / seconds},
      {"nodes_per_s", static_cast<double>(all.nodes) / seconds},
      {"p50_ms", Percentile(all.micros, 50)},
      {"p90_ms", Percentile(all.micros, 90)},
      {"p99_ms", Percentile(all.micros, 99)},
      {"max_ms", Percentile(all.micros, 100)},
      {"scorer_cpu_s", ProcessCpuSeconds(scorer_pid) - scorer_cpu0},
      {"client_cpu_s", ProcessCpuSeconds(0) - client_cpu0},
      {"scorer_rss_kib_after", ProcStatusKib(scorer_pid, "VmRSS:")},
      {"scorer_hwm_kib_after", ProcStatusKib(scorer_pid, "VmHWM:")}};
  std::printf(
      "round %d: %lld calls in %.1f s, %.0f calls/s, %.0f nodes/s, latency "
      "p50 %.1f ms p99 %.1f ms max %.1f ms; errors %lld, incomplete %lld; "
      "scorer CPU %.1f s, client CPU %.1f s; scorer RSS after %lld KiB\n",
      round, static_cast<long long>(all.calls), seconds,
      out["requests_per_s"].get<double>(), out["nodes_per_s"].get<double>(),
      out["p50_ms"].get<double>(), out["p99_ms"].get<double>(),
      out["max_ms"].get<double>(), static_cast<long long>(errors),
      static_cast<long long>(all.incomplete), out["scorer_cpu_s"].get<double>(),
      out["client_cpu_s"].get<double>(),
      static_cast<long long>(out["scorer_rss_kib_after"].get<int64_t>()));
  for (const auto& [k, v] : all.errors) {
    std::printf("  %lld x %s\n", static_cast<long long>(v), k.c_str());
  }
  std::fflush(stdout);
  return out;
}

// ------------------------------------------------------------------ limits

// A request of at least `min_bytes` or with exactly `nodes` candidates
// (whichever is given), the basic pod under `profile`, candidates wrapping
// around the cache's node list.
std::string BigRequest(const cache::Cache& c, const std::string& profile,
                       int64_t min_bytes, int64_t nodes) {
  absl::StatusOr<objects::PodInfo> pod =
      MakePod(Kind::kBasic, 20000000, profile, "");
  pb::EvaluateRequest head;
  head.set_profile(profile);
  *head.mutable_pod() = pod->pod;
  head.set_detail(pb::DETAIL_TOTALS);
  std::string bytes = head.SerializeAsString();
  const std::vector<std::string> keys = {"app"};
  size_t start = 0;
  int64_t appended = 0;
  while (nodes > 0 ? appended < nodes
                   : static_cast<int64_t>(bytes.size()) < min_bytes) {
    const int64_t step =
        nodes > 0 ? std::min<int64_t>(1000, nodes - appended) : int64_t{1000};
    appended += static_cast<int64_t>(
        c.AppendCandidates(*pod, keys, start, static_cast<size_t>(step), true,
                           pb::EvaluateRequest::kNodesFieldNumber, &bytes));
    start += static_cast<size_t>(step);
  }
  return bytes;
}

// Sends `bytes` (already encoded, as the shim sends them) as Evaluate
// --limit-calls times, one after the other; expects `want` each time.
nlohmann::json LimitCheck(const std::string& name, RawStub& stub,
                          const std::string& bytes, grpc::StatusCode want,
                          int scorer_pid, bool* ok) {
  const int64_t rss0 = ProcStatusKib(scorer_pid, "VmRSS:");
  std::vector<uint32_t> micros;
  std::map<std::string, int64_t> codes;
  int64_t max_rss = rss0;
  bool all_wanted = true;
  grpc::CompletionQueue cq;
  for (int i = 0; i < absl::GetFlag(FLAGS_limit_calls); ++i) {
    Slot s;
    grpc::Slice slice(bytes.data(), bytes.size(), grpc::Slice::STATIC_SLICE);
    s.request = grpc::ByteBuffer(&slice, 1);
    s.ctx = std::make_unique<grpc::ClientContext>();
    s.ctx->set_deadline(std::chrono::system_clock::now() +
                        std::chrono::seconds(60));
    s.started = Clock::now();
    s.rpc = stub.PrepareUnaryCall(s.ctx.get(), kEvaluateMethod, s.request, &cq);
    s.rpc->StartCall();
    s.rpc->Finish(&s.response, &s.status, &s);
    void* tag = nullptr;
    bool done = false;
    cq.Next(&tag, &done);
    micros.push_back(static_cast<uint32_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() -
                                                              s.started)
            .count()));
    max_rss = std::max(max_rss, ProcStatusKib(scorer_pid, "VmRSS:"));
    ++codes[absl::StrCat(s.status.error_code(), ": ",
                         s.status.error_message())];
    all_wanted = all_wanted && s.status.error_code() == want;
  }
  cq.Shutdown();
  void* tag = nullptr;
  bool done = false;
  while (cq.Next(&tag, &done)) {
  }
  const int64_t rss1 = ProcStatusKib(scorer_pid, "VmRSS:");
  pb::EvaluateRequest parsed;
  const int nodes = parsed.ParseFromString(bytes) ? parsed.nodes_size() : -1;
  nlohmann::json out = {{"check", name},
                        {"request_bytes", bytes.size()},
                        {"request_nodes", nodes},
                        {"want_code", static_cast<int>(want)},
                        {"answers", codes},
                        {"as_wanted", all_wanted},
                        {"p50_ms", Percentile(micros, 50)},
                        {"max_ms", Percentile(micros, 100)},
                        {"scorer_rss_kib_before", rss0},
                        {"scorer_rss_kib_max_seen", max_rss},
                        {"scorer_rss_kib_after", rss1}};
  std::printf(
      "%s: %zu bytes, %d nodes; %s; latency p50 %.1f ms max %.1f ms; scorer "
      "RSS %lld -> %lld KiB (max seen %lld)\n",
      name.c_str(), bytes.size(), nodes,
      all_wanted ? "refused as expected" : "NOT as expected",
      out["p50_ms"].get<double>(), out["max_ms"].get<double>(),
      static_cast<long long>(rss0), static_cast<long long>(rss1),
      static_cast<long long>(max_rss));
  for (const auto& [k, v] : codes) {
    std::printf("  %lld x %s\n", static_cast<long long>(v), k.c_str());
  }
  std::fflush(stdout);
  *ok = *ok && all_wanted;
  return out;
}

int Main() {
  const std::string target = absl::GetFlag(FLAGS_target);
  const int pid = absl::GetFlag(FLAGS_scorer_pid);
  const int cluster_nodes = absl::GetFlag(FLAGS_cluster_nodes);
  const int min_nodes = absl::GetFlag(FLAGS_min_nodes);
  const int max_nodes = absl::GetFlag(FLAGS_max_nodes);
  if (target.empty()) {
    std::fprintf(stderr, "--target is required (the scorer's host:port)\n");
    return 2;
  }
  if (absl::GetFlag(FLAGS_concurrency) < 1 || absl::GetFlag(FLAGS_rounds) < 1 ||
      absl::GetFlag(FLAGS_duration_seconds) < 1 ||
      absl::GetFlag(FLAGS_pool) < 1 || absl::GetFlag(FLAGS_max_requests) < 1) {
    std::fprintf(stderr,
                 "--concurrency, --rounds, --duration-seconds, --pool and "
                 "--max-requests must be at least 1\n");
    return 2;
  }
  if (min_nodes < 1 || max_nodes < min_nodes || max_nodes > cluster_nodes) {
    std::fprintf(stderr,
                 "need 1 <= --min-nodes (%d) <= --max-nodes (%d) <= "
                 "--cluster-nodes (%d)\n",
                 min_nodes, max_nodes, cluster_nodes);
    return 2;
  }

  // The shim's cache: every node with two bound pods, one basic and one
  // constrained, so the plans of constrained pods find their terms.
  cache::Cache c;
  for (int i = 0; i < cluster_nodes; ++i) c.UpsertNode(MakeNode(i));
  for (int i = 0; i < cluster_nodes; ++i) {
    const std::string node = absl::StrCat("load-node-", i);
    for (Kind kind : {Kind::kBasic, Kind::kConstrained}) {
      absl::StatusOr<objects::PodInfo> p = MakePod(
          kind, 2 * i + (kind == Kind::kBasic ? 0 : 1), "kscore-default", node);
      if (!p.ok()) {
        std::fprintf(stderr, "pod: %s\n", p.status().ToString().c_str());
        return 1;
      }
      c.UpsertAssignedPod(*p);
    }
  }

  absl::StatusOr<std::unique_ptr<scorer_client::ScorerClient>> client =
      scorer_client::ScorerClient::Create(
          {.target = target, .timeout = absl::Seconds(30)});
  if (!client.ok()) {
    std::fprintf(stderr, "%s\n", client.status().ToString().c_str());
    return 1;
  }
  absl::StatusOr<std::vector<Request>> pool =
      BuildPool(**client, c, cluster_nodes);
  if (!pool.ok()) {
    std::fprintf(stderr, "building the requests: %s\n",
                 pool.status().ToString().c_str());
    return 1;
  }
  size_t pool_bytes = 0;
  int pool_nodes = 0;
  for (const Request& r : *pool) {
    pool_bytes += r.bytes.size();
    pool_nodes += r.nodes;
  }
  std::printf(
      "%zu requests, %d..%d nodes (mean %.0f), mean %.0f bytes; concurrency "
      "%d, %d client thread(s), %d round(s) of %d s\n",
      pool->size(), min_nodes, max_nodes,
      static_cast<double>(pool_nodes) / static_cast<double>(pool->size()),
      static_cast<double>(pool_bytes) / static_cast<double>(pool->size()),
      absl::GetFlag(FLAGS_concurrency), absl::GetFlag(FLAGS_client_threads),
      absl::GetFlag(FLAGS_rounds), absl::GetFlag(FLAGS_duration_seconds));

  auto channel =
      grpc::CreateChannel(target, grpc::InsecureChannelCredentials());
  RawStub raw(channel);
  nlohmann::json report = {
      {"target", target},
      {"concurrency", absl::GetFlag(FLAGS_concurrency)},
      {"client_threads", absl::GetFlag(FLAGS_client_threads)},
      {"duration_seconds", absl::GetFlag(FLAGS_duration_seconds)},
      {"max_requests", absl::GetFlag(FLAGS_max_requests)},
      {"min_nodes", min_nodes},
      {"max_nodes", max_nodes},
      {"cluster_nodes", cluster_nodes},
      {"pool", pool->size()},
      {"pool_mean_nodes",
       static_cast<double>(pool_nodes) / static_cast<double>(pool->size())},
      {"pool_mean_bytes",
       static_cast<double>(pool_bytes) / static_cast<double>(pool->size())},
      {"scorer_rss_kib_before", ProcStatusKib(pid, "VmRSS:")}};
  std::printf(
      "scorer RSS before: %lld KiB\n",
      static_cast<long long>(report["scorer_rss_kib_before"].get<int64_t>()));

  bool ok = true;
  nlohmann::json rounds = nlohmann::json::array();
  for (int r = 1; r <= absl::GetFlag(FLAGS_rounds); ++r) {
    nlohmann::json round = RunRound(r, raw, *pool, pid);
    ok = ok && round["errors"].get<int64_t>() == 0 &&
         round["incomplete"].get<int64_t>() == 0 &&
         round["calls"].get<int64_t>() > 0;
    rounds.push_back(std::move(round));
  }
  report["rounds"] = rounds;

  nlohmann::json limits = nlohmann::json::array();
  const std::string profile = (*pool)[0].profile;
  if (const int64_t max_bytes = absl::GetFlag(FLAGS_max_request_bytes);
      max_bytes > 0) {
    for (const std::string& size : absl::GetFlag(FLAGS_oversized_bytes)) {
      int64_t bytes = 0;
      if (!absl::SimpleAtoi(size, &bytes) || bytes < 0) {
        std::fprintf(stderr, "--oversized-bytes: bad size \"%s\"\n",
                     size.c_str());
        return 2;
      }
      limits.push_back(LimitCheck(
          bytes == 0 ? "request just over --max-request-bytes"
                     : "request far over --max-request-bytes",
          raw, BigRequest(c, profile, std::max(max_bytes + 1, bytes), 0),
          grpc::StatusCode::RESOURCE_EXHAUSTED, pid, &ok));
    }
  }
  if (const int max_batch = absl::GetFlag(FLAGS_max_batch_nodes);
      max_batch > 0) {
    limits.push_back(LimitCheck("batch over --max-batch-nodes", raw,
                                BigRequest(c, profile, 0, max_batch + 1),
                                grpc::StatusCode::INVALID_ARGUMENT, pid, &ok));
  }
  report["limits"] = limits;
  report["scorer_rss_kib_end"] = ProcStatusKib(pid, "VmRSS:");
  report["scorer_hwm_kib_end"] = ProcStatusKib(pid, "VmHWM:");
  report["ok"] = ok;

  if (const std::string out = absl::GetFlag(FLAGS_out); !out.empty()) {
    std::ofstream f(out);
    f << report.dump(1) << "\n";
    if (!f) {
      std::fprintf(stderr, "cannot write %s\n", out.c_str());
      return 1;
    }
  }
  std::printf("%s\n", ok ? "PASS" : "FAIL: see the errors above");
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace kscore

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "scorer_load --target HOST:PORT [--scorer-pid PID] [--concurrency 64] "
      "[--duration-seconds 60] [--rounds 2] ...\n"
      "Drives a running scorer's Evaluate from many concurrent callers "
      "(bench/scorer_load.sh).");
  // Kube-style dashes (--scorer-pid) as the scorer's own flags.
  kscore::common::KubeStyleArgs args(argc, argv);
  absl::ParseCommandLine(args.argc(), args.argv.data());
  return kscore::Main();
}
