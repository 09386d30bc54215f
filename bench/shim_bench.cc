// Micro-benchmarks of the shim's hot path, per scheduling cycle:
//   snapshot update   informer event -> PodInfo (PodFromProto, PodFromJson) ->
//   Cache::UpsertAssignedPod,
//                     and AssumePod/ForgetPod (what every cycle does once)
//   candidates        Cache::AppendCandidates over a window of the node list
//                     (the nodes' kept encodings, copied)
//   request encoding  one encoded EvaluateRequest (profile, pod, candidates)
//                     as the scheduler assembles it
// The scorer side (the fused Evaluate call) is in scorer_bench.cc.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "kscore/k8s/k8s_subset.pb.h"
#include "model/config.h"
#include "nlohmann/json.hpp"
#include "scorer/framework/profile_set.h"
#include "scorer/plugins/registry.h"
#include "shim/cache/cache.h"
#include "shim/objects/objects.h"

namespace kscore {
namespace {

using cache::Cache;
using objects::PodInfo;
namespace pb = ::kscore::scorer::v1;
namespace k8s = ::kscore::k8s;

// A Node as bench/binder creates them (and as hack/cluster.sh does).
pb::Node MakeNode(int i, bool labels = true) {
  pb::Node n;
  const std::string name = absl::StrCat("bench-node-", i);
  n.set_name(name);
  if (labels) {
    auto& l = *n.mutable_labels();
    l["kubernetes.io/hostname"] = name;
    l["kubernetes.io/os"] = "linux";
    l["kubernetes.io/arch"] = "amd64";
    l["topology.kubernetes.io/zone"] = absl::StrCat("zone-", i % 3);
  }
  n.mutable_allocatable()->set_milli_cpu(4000);
  n.mutable_allocatable()->set_memory(int64_t{16} << 30);
  return n;
}

// The JSON of a pod the way a watch event carries it (scheduler_perf's pod).
nlohmann::json PodJson(int i, const std::string& node) {
  const std::string name = absl::StrCat("p-", i);
  nlohmann::json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", name},
        {"namespace", "default"},
        {"uid", absl::StrCat("00000000-0000-0000-0000-", 100000000000 + i)},
        {"resourceVersion", absl::StrCat(1000 + i)},
        {"creationTimestamp", "2026-12-02T11:36:57Z"},
        {"labels",
         {{"app", absl::StrCat("g-", i / 10)}, {"kbench-run", "c"}}}}},
      {"spec",
       {{"schedulerName", "concentrate-scheduler"},
        {"terminationGracePeriodSeconds", 0},
        {"priority", 0},
        {"containers",
         {{{"name", "pause"},
           {"image", "pause:3.10"},
           {"resources",
            {{"requests", {{"cpu", "100m"}, {"memory", "500Mi"}}},
             {"limits", {{"cpu", "100m"}, {"memory", "500Mi"}}}}}}}}}},
      {"status", {{"phase", "Pending"}, {"qosClass", "Guaranteed"}}}};
  if (!node.empty()) pod["spec"]["nodeName"] = node;
  return pod;
}

// The same pod in the Kubernetes protobuf encoding, as a protobuf watch event
// or list item carries it (the object's bytes, without envelope).
std::string PodProto(int i, const std::string& node) {
  k8s::Pod pod;
  k8s::ObjectMeta* m = pod.mutable_metadata();
  m->set_name(absl::StrCat("p-", i));
  m->set_namespace_("default");
  m->set_uid(absl::StrCat("00000000-0000-0000-0000-", 100000000000 + i));
  m->set_resource_version(absl::StrCat(1000 + i));
  m->mutable_creation_timestamp()->set_seconds(1796208217);
  (*m->mutable_labels())["app"] = absl::StrCat("g-", i / 10);
  (*m->mutable_labels())["kbench-run"] = "c";
  k8s::PodSpec* s = pod.mutable_spec();
  s->set_scheduler_name("concentrate-scheduler");
  s->set_priority(0);
  if (!node.empty()) s->set_node_name(node);
  auto& requests =
      *s->add_containers()->mutable_resources()->mutable_requests();
  requests["cpu"].set_string("100m");
  requests["memory"].set_string("500Mi");
  pod.mutable_status()->set_phase("Pending");
  return pod.SerializeAsString();
}

PodInfo MakePod(int i, const std::string& node) {
  auto p = objects::PodFromJson(PodJson(i, node));
  return *std::move(p);
}

// A cache with `nodes` nodes and `pods_per_node` bound pods each (groups of 10
// sharing an app label, as hack/bench.sh creates them).
void Fill(Cache& c, int nodes, int pods_per_node, bool labels = true) {
  for (int i = 0; i < nodes; ++i) c.UpsertNode(MakeNode(i, labels));
  int k = 0;
  for (int i = 0; i < nodes; ++i)
    for (int j = 0; j < pods_per_node; ++j)
      c.UpsertAssignedPod(MakePod(k++, absl::StrCat("bench-node-", i)));
}

const std::vector<std::string> kLabelKeys = {"app"};

// Informer event -> PodInfo: the decode the shim does per watch event, here
// from JSON (clientConnection.contentType application/json; the JSON parse
// itself is not counted).
void BM_PodFromJson(benchmark::State& state) {
  const nlohmann::json pod = PodJson(7, "bench-node-3");
  for (auto _ : state) {
    auto p = objects::PodFromJson(pod);
    if (!p.ok()) {
      state.SkipWithError("PodFromJson failed");
      break;
    }
    benchmark::DoNotOptimize(p->pod);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PodFromJson);

// The same from protobuf bytes, as the informer decodes each pod of a list
// or watch event by default (clientConnection.contentType protobuf).
void BM_PodFromProto(benchmark::State& state) {
  const std::string raw = PodProto(7, "bench-node-3");
  for (auto _ : state) {
    auto p = objects::PodFromProto(raw);
    if (!p.ok()) {
      state.SkipWithError("PodFromProto failed");
      break;
    }
    benchmark::DoNotOptimize(p->pod);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_PodFromProto);

// Snapshot update: a bound pod arrives (replacing nothing) and leaves again.
void BM_CacheUpsertRemovePod(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  Cache c;
  Fill(c, nodes, 2);
  const PodInfo pod = MakePod(9999999, "bench-node-1");
  for (auto _ : state) {
    c.UpsertAssignedPod(pod);
    c.RemovePod(pod.key);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CacheUpsertRemovePod)->Arg(5000);

// What every cycle does: assume the pod on the chosen node, then the informer's
// confirmation replaces the assumed copy.
void BM_CacheAssumeConfirm(benchmark::State& state) {
  const int nodes = static_cast<int>(state.range(0));
  Cache c;
  Fill(c, nodes, 2);
  const PodInfo pending = MakePod(9999999, "");
  const PodInfo bound = MakePod(9999999, "bench-node-1");
  for (auto _ : state) {
    c.AssumePod(pending, "bench-node-1");
    c.UpsertAssignedPod(bound);
    c.RemovePod(bound.key);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_CacheAssumeConfirm)->Arg(5000);

// One cycle's candidates: the next window of `count` nodes appended to `out`
// (false, with the benchmark marked failed, if fewer came back).
bool AppendWindow(benchmark::State& state, const Cache& c,
                  const PodInfo& incoming, int count, bool labels,
                  size_t* start, std::string* out) {
  size_t n = c.AppendCandidates(incoming, kLabelKeys, *start, count, labels,
                                pb::EvaluateRequest::kNodesFieldNumber, out);
  if (n != static_cast<size_t>(count)) {
    state.SkipWithError("AppendCandidates returned too few nodes");
    return false;
  }
  *start += count;
  benchmark::DoNotOptimize(out->data());
  return true;
}

// Candidate building: `count` nodes of a 5000-node cache, each with `per_node`
// pods. Time should follow count, not per_node (the contract's O(candidates)).
void BM_AppendCandidates(benchmark::State& state) {
  const int count = static_cast<int>(state.range(0));
  const int per_node = static_cast<int>(state.range(1));
  Cache c;
  Fill(c, 5000, per_node);
  const PodInfo incoming = MakePod(12345678, "");
  size_t start = 0;
  std::string out;
  for (auto _ : state) {
    out.clear();
    if (!AppendWindow(state, c, incoming, count, true, &start, &out)) break;
  }
  state.SetItemsProcessed(state.iterations() * count);
}
BENCHMARK(BM_AppendCandidates)
    ->Args({100, 2})
    ->Args({500, 2})
    ->Args({500, 30})
    ->Args({5000, 2});

// The same with the caches cold, as in a busy scheduler: other processes
// (the API server, etcd, the scorer) evict the nodes between two cycles.
void BM_AppendCandidatesCold(benchmark::State& state) {
  const int count = static_cast<int>(state.range(0));
  Cache c;
  Fill(c, 5000, 2, false);
  const PodInfo incoming = MakePod(12345678, "");
  std::vector<char> evict(64 << 20);
  size_t start = 0;
  std::string out;
  for (auto _ : state) {
    state.PauseTiming();
    for (size_t i = 0; i < evict.size(); i += 64) evict[i]++;
    out.clear();
    out.shrink_to_fit();
    state.ResumeTiming();
    if (!AppendWindow(state, c, incoming, count, false, &start, &out)) break;
  }
  state.SetItemsProcessed(state.iterations() * count);
}
// Each iteration evicts 64 MiB (untimed): a fixed count keeps the run short.
BENCHMARK(BM_AppendCandidatesCold)->Arg(500)->Iterations(200);

// Request encoding: the EvaluateRequest the shim sends for one pod, assembled
// as the scheduler does (profile and pod encoded once, candidates appended
// from the cache). labels=0 leaves node labels out, as for a pod without node
// selector or affinity. request_bytes is the wire size per call; the request
// must parse back to `nodes` candidates.
void BM_EncodeEvaluateRequest(benchmark::State& state) {
  const int count = static_cast<int>(state.range(0));
  const bool labels = state.range(1) != 0;
  Cache c;
  Fill(c, 5000, 2, labels);
  const PodInfo incoming = MakePod(12345678, "");
  std::string wire;
  for (auto _ : state) {
    pb::EvaluateRequest head;
    head.set_profile("concentrate-scheduler");
    *head.mutable_pod() = incoming.pod;
    wire.clear();
    head.SerializeToString(&wire);
    c.AppendCandidates(incoming, kLabelKeys, 0, count, labels,
                       pb::EvaluateRequest::kNodesFieldNumber, &wire);
    benchmark::DoNotOptimize(wire.data());
  }
  pb::EvaluateRequest parsed;
  if (!parsed.ParseFromString(wire) || parsed.nodes_size() != count) {
    state.SkipWithError("the encoded request does not parse back");
  }
  state.counters["request_bytes"] = static_cast<double>(wire.size());
  state.counters["bytes_per_node"] = static_cast<double>(wire.size()) / count;
  state.SetBytesProcessed(state.iterations() *
                          static_cast<int64_t>(wire.size()));
}
BENCHMARK(BM_EncodeEvaluateRequest)
    ->ArgNames({"nodes", "labels"})
    ->Args({500, 1})
    ->Args({500, 0});

// A pod of workload `app` as the spread and anti-affinity shapes make them:
// a zone spread constraint (maxSkew 5) and required hostname anti-affinity,
// both selecting the pod's own app.
pb::Pod ConstrainedPod(int i, int app) {
  pb::Pod p;
  p.set_namespace_("default");
  p.set_name(absl::StrCat("c-", i));
  p.set_uid(absl::StrCat("uid-c-", i));
  const std::string value = absl::StrCat("app-", app);
  (*p.mutable_labels())["app"] = value;
  pb::Container* c = p.add_containers();
  c->mutable_requests()->set_milli_cpu(10);
  c->mutable_requests()->set_memory(1 << 20);
  pb::TopologySpreadConstraint* t = p.add_topology_spread_constraints();
  t->set_max_skew(5);
  t->set_topology_key("topology.kubernetes.io/zone");
  t->set_when_unsatisfiable("DoNotSchedule");
  (*t->mutable_label_selector()->mutable_match_labels())["app"] = value;
  pb::PodAffinityTerm* term = p.mutable_pod_anti_affinity()->add_required();
  term->set_topology_key("kubernetes.io/hostname");
  (*term->mutable_label_selector()->mutable_match_labels())["app"] = value;
  return p;
}

// The stock profile's plan for `pod` (PodTopologySpread, InterPodAffinity);
// false (the benchmark skipped) when the profile does not parse.
bool StockPlan(const pb::Pod& pod, pb::PlanResponse* plan,
               benchmark::State& state) {
  absl::StatusOr<std::unique_ptr<framework::ProfileSet>> set =
      framework::ParseProfileSet(
          "apiVersion: kubescheduler.config.k8s.io/v1\n"
          "kind: KubeSchedulerConfiguration\n"
          "profiles:\n- schedulerName: kscore-default\n",
          plugins::DefaultRegistry());
  if (!set.ok()) {
    state.SkipWithError(std::string(set.status().message()).c_str());
    return false;
  }
  *plan = (*set)->Find("kscore-default")->Plan(pod);
  return true;
}

// `nodes` nodes with `per_node` constrained pods each, spread over `apps`
// workloads; returns the number of pods placed.
int FillConstrained(Cache& c, int nodes, int per_node, int apps) {
  for (int n = 0; n < nodes; ++n) c.UpsertNode(MakeNode(n));
  int id = 0;
  for (int n = 0; n < nodes; ++n) {
    for (int k = 0; k < per_node; ++k, ++id) {
      PodInfo placed;
      placed.pod = ConstrainedPod(id, id % apps);
      placed.namespace_ = "default";
      placed.name = placed.pod.name();
      placed.key = absl::StrCat("default/", placed.name);
      placed.uid = placed.pod.uid();
      placed.node_name = absl::StrCat("bench-node-", n);
      placed.phase = "Running";
      c.UpsertAssignedPod(placed);
    }
  }
  return id;
}

// The request for a pod with cluster-wide rules under the stock profile, at
// 5000 nodes: the scorer's real plan for the pod (PodTopologySpread,
// InterPodAffinity), the shim's answers (Cache::Prepare) and 500 candidates.
// Every placed pod carries the same two rules; `per_node` of them on each
// node, spread over `apps` workloads (so `apps` distinct anti-affinity terms
// exist). request_bytes follows the candidates, the plan's queries and, per
// candidate, the distinct terms present in its domains (at most per_node
// for hostname terms): with one workload it stays flat from 2 to 10 pods
// per node.
void BM_EncodePlannedRequest(benchmark::State& state) {
  const int per_node = static_cast<int>(state.range(0));
  const int apps = static_cast<int>(state.range(1));
  constexpr int kNodes = 5000;
  constexpr int kCandidates = 500;
  Cache c;
  const int id = FillConstrained(c, kNodes, per_node, apps);
  PodInfo incoming;
  incoming.pod = ConstrainedPod(id, 0);
  incoming.namespace_ = "default";
  incoming.name = incoming.pod.name();
  incoming.key = absl::StrCat("default/", incoming.name);
  pb::PlanResponse plan;
  if (!StockPlan(incoming.pod, &plan, state)) return;
  std::string wire;
  for (auto _ : state) {
    std::shared_ptr<const cache::ClusterIndex::Prepared> prepared =
        c.Prepare(incoming.pod, plan);
    pb::EvaluateRequest head;
    head.set_profile("kscore-default");
    *head.mutable_pod() = incoming.pod;
    *head.mutable_cluster() = prepared->cluster;
    wire.clear();
    head.SerializeToString(&wire);
    c.AppendCandidates(incoming, {}, 0, kCandidates, true,
                       pb::EvaluateRequest::kNodesFieldNumber, &wire, nullptr,
                       prepared.get());
    benchmark::DoNotOptimize(wire.data());
  }
  pb::EvaluateRequest parsed;
  if (!parsed.ParseFromString(wire) || parsed.nodes_size() != kCandidates) {
    state.SkipWithError("the encoded request does not parse back");
  }
  state.counters["pods"] = static_cast<double>(id);
  state.counters["queries"] = static_cast<double>(plan.queries_size());
  state.counters["existing_terms"] =
      static_cast<double>(parsed.cluster().existing_terms_size());
  state.counters["request_bytes"] = static_cast<double>(wire.size());
  state.counters["bytes_per_node"] =
      static_cast<double>(wire.size()) / kCandidates;
}
BENCHMARK(BM_EncodePlannedRequest)
    ->ArgNames({"per_node", "apps"})
    ->Args({2, 1})
    ->Args({10, 1})
    ->Args({10, 10})
    ->Args({2, 100})
    ->Args({10, 100})
    ->Args({2, 1000})
    ->Unit(benchmark::kMillisecond);

// Cache::Prepare alone for such a pod at 5000 nodes: the plan's queries
// (zone spread with its domains and minimum, hostname anti-affinity) and
// the existing terms, answered once per cycle. A node status update (same
// labels and taints) comes between cycles, as heartbeats do (not timed).
void BM_PrepareSpreadQuery(benchmark::State& state) {
  const int per_node = static_cast<int>(state.range(0));
  const int apps = static_cast<int>(state.range(1));
  constexpr int kNodes = 5000;
  Cache c;
  const int id = FillConstrained(c, kNodes, per_node, apps);
  const pb::Pod incoming = ConstrainedPod(id, 0);
  pb::PlanResponse plan;
  if (!StockPlan(incoming, &plan, state)) return;
  int64_t domains = 0;
  int beat = 0;
  for (auto _ : state) {
    state.PauseTiming();
    c.UpsertNode(MakeNode(beat++ % kNodes));
    state.ResumeTiming();
    std::shared_ptr<const cache::ClusterIndex::Prepared> prepared =
        c.Prepare(incoming, plan);
    domains = prepared->cluster.answers_size() > 0
                  ? prepared->cluster.answers(0).domains()
                  : 0;
    benchmark::DoNotOptimize(prepared.get());
  }
  state.counters["queries"] = static_cast<double>(plan.queries_size());
  state.counters["domains"] = static_cast<double>(domains);
}
BENCHMARK(BM_PrepareSpreadQuery)
    ->ArgNames({"per_node", "apps"})
    ->Args({2, 1})
    ->Args({2, 100})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace kscore

BENCHMARK_MAIN();
