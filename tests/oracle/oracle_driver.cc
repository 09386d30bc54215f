// The kscore side of the differential oracle (reference/cmd/oracle): reads
// the generated cases, feeds each cluster through kscore's real path and
// writes kscore's answer per case in the oracle's "want" schema, for
// `oracle compare`.
//
// The path: the shim's JSON decoders and cache (with its cluster index),
// its profile lookup, plan and request building (PrepareCycle, AppendNamed),
// its gRPC scorer client, and the scorer's gRPC service and plugins on a
// loopback port (one server per distinct configuration in the cases). Every
// node of a case is evaluated in one Evaluate call with DETAIL_FULL, as the
// oracle evaluates every node.
//
//   oracle_driver --cases cases.jsonl --out got.jsonl

#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"
#include "grpcpp/grpcpp.h"
#include "nlohmann/json.hpp"
#include "scorer/framework/config.h"
#include "scorer/framework/profile_set.h"
#include "scorer/plugins/registry.h"
#include "scorer/server/scorer_service.h"
#include "shim/cache/cache.h"
#include "shim/cache/objects.h"
#include "shim/scheduler/cycle.h"
#include "shim/scheduler/profiles.h"
#include "shim/scorer_client/scorer_client.h"
#include "spdlog/spdlog.h"

ABSL_FLAG(std::string, cases, "", "the oracle's cases file (JSON lines)");
ABSL_FLAG(std::string, out, "", "where to write kscore's answers");

namespace kscore {
namespace {

namespace pb = ::kscore::scorer::v1;
using nlohmann::json;

constexpr char kProfile[] = "kscore-default";

// A scorer serving one configuration on a loopback port, and the shim's
// client and profile lookup for it.
struct Scorer {
  std::unique_ptr<framework::ProfileSet> profiles;
  std::unique_ptr<server::ScorerService> service;
  std::unique_ptr<grpc::Server> server;
  std::unique_ptr<scorer_client::ScorerClient> client;
  std::unique_ptr<scheduler::Profiles> lookup;
  pb::ListProfilesResponse listed;
};

absl::StatusOr<std::unique_ptr<Scorer>> StartScorer(const std::string& yaml) {
  auto s = std::make_unique<Scorer>();
  absl::StatusOr<std::unique_ptr<framework::ProfileSet>> set =
      framework::ParseProfileSet(yaml, plugins::DefaultRegistry());
  if (!set.ok()) return set.status();
  s->profiles = *std::move(set);
  s->service = std::make_unique<server::ScorerService>(
      s->profiles.get(), server::ServiceOptions{});
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(),
                           &port);
  builder.RegisterService(s->service.get());
  builder.SetMaxReceiveMessageSize(64 << 20);
  s->server = builder.BuildAndStart();
  if (s->server == nullptr || port == 0) {
    return absl::InternalError("cannot listen on 127.0.0.1");
  }
  absl::StatusOr<std::unique_ptr<scorer_client::ScorerClient>> client =
      scorer_client::ScorerClient::Create(
          {.target = absl::StrCat("127.0.0.1:", port),
           .timeout = absl::Seconds(30),
           .attempts = 1});
  if (!client.ok()) return client.status();
  s->client = *std::move(client);
  scorer_client::ScorerClient* c = s->client.get();
  scheduler::Profiles::Options options;
  options.served = {kProfile};
  s->lookup = std::make_unique<scheduler::Profiles>(
      std::move(options), [c] { return c->ListProfiles(); });
  absl::StatusOr<pb::ListProfilesResponse> listed = c->ListProfiles();
  if (!listed.ok()) return listed.status();
  s->listed = *std::move(listed);
  return s;
}

std::string CodeName(pb::Code c) {
  switch (c) {
    case pb::CODE_SUCCESS:
      return "Success";
    case pb::CODE_ERROR:
      return "Error";
    case pb::CODE_UNSCHEDULABLE:
      return "Unschedulable";
    case pb::CODE_UNSCHEDULABLE_AND_UNRESOLVABLE:
      return "UnschedulableAndUnresolvable";
    case pb::CODE_SKIP:
      return "Skip";
    default:
      return "Unknown";
  }
}

json StatusJson(const pb::Status& s) {
  json reasons = json::array();
  for (const std::string& r : s.reasons()) reasons.push_back(r);
  std::string plugin = s.code() == pb::CODE_SUCCESS ? "" : s.plugin();
  // Nodes a PreFilterResult leaves out: the oracle names the narrowing
  // plugins there (upstream's status names none); kscore's reason lists
  // them: "node(s) didn't satisfy plugin(s) [A B]".
  constexpr absl::string_view kNarrowed = "node(s) didn't satisfy plugin(s) [";
  if (plugin.empty() && s.reasons_size() == 1 &&
      absl::StartsWith(s.reasons(0), kNarrowed) &&
      absl::EndsWith(s.reasons(0), "]")) {
    absl::string_view names = s.reasons(0);
    names.remove_prefix(kNarrowed.size());
    names.remove_suffix(1);
    plugin = absl::StrReplaceAll(names, {{" ", ","}});
  }
  return {
      {"code", CodeName(s.code())}, {"plugin", plugin}, {"reasons", reasons}};
}

json ErrorAnswer(int64_t index, const std::string& what) {
  return {
      {"index", index},
      {"preFilter", {{"code", "Error"}, {"plugin", ""}, {"reasons", {what}}}},
      {"nodes", json::array()},
      {"skipped", json::array()},
      {"weights", json::object()}};
}

absl::Status Load(const json& input, cache::Cache& c) {
  for (const json& n : input.at("nodes")) {
    absl::StatusOr<cache::NodeInfo> node = cache::NodeFromJson(n);
    if (!node.ok()) return node.status();
    c.UpsertNode(node->node, node->images);
  }
  for (const json& p : input.at("pods")) {
    absl::StatusOr<cache::PodInfo> pod = cache::PodFromJson(p);
    if (!pod.ok()) return pod.status();
    c.UpsertAssignedPod(*pod);
  }
  for (const json& ns : input.at("namespaces")) {
    absl::StatusOr<cache::NamespaceInfo> info = cache::NamespaceFromJson(ns);
    if (!info.ok()) return info.status();
    c.UpsertNamespace(info->name, info->labels);
  }
  const std::pair<const char*, cache::WorkloadKind> lists[] = {
      {"services", cache::WorkloadKind::kService},
      {"replicaSets", cache::WorkloadKind::kReplicaSet},
      {"statefulSets", cache::WorkloadKind::kStatefulSet},
      {"replicationControllers", cache::WorkloadKind::kReplicationController}};
  for (const auto& [list, kind] : lists) {
    for (const json& w : input.at(list)) {
      absl::StatusOr<cache::WorkloadInfo> info =
          cache::WorkloadFromJson(kind, w);
      if (!info.ok()) return info.status();
      c.UpsertWorkload(info->kind, info->namespace_, info->name,
                       info->has_selector, info->selector);
    }
  }
  return absl::OkStatus();
}

json Answer(int64_t index, const json& input,
            std::map<std::string, std::unique_ptr<Scorer>>& scorers) {
  const std::string yaml = input.at("profile").get<std::string>();
  std::unique_ptr<Scorer>& scorer = scorers[yaml];
  if (scorer == nullptr) {
    absl::StatusOr<std::unique_ptr<Scorer>> started = StartScorer(yaml);
    if (!started.ok()) {
      return ErrorAnswer(index, std::string(started.status().message()));
    }
    scorer = *std::move(started);
  }
  cache::Cache c;
  if (absl::Status s = Load(input, c); !s.ok()) {
    return ErrorAnswer(index, std::string(s.message()));
  }
  absl::StatusOr<cache::PodInfo> pod = cache::PodFromJson(input.at("pod"));
  if (!pod.ok()) return ErrorAnswer(index, std::string(pod.status().message()));
  pod->scheduler_name = kProfile;
  // The shim never schedules a pod that names its node (spec.nodeName makes
  // it bound), so its decoders leave pb::Pod.node_name to direct callers of
  // the scorer; the generator's pods that name a node test NodeName that way.
  pod->pod.set_node_name(pod->node_name);
  pod->node_name.clear();
  absl::StatusOr<std::shared_ptr<const scheduler::ProfileInfo>> profile =
      scorer->lookup->Lookup(kProfile);
  if (!profile.ok()) {
    return ErrorAnswer(index, std::string(profile.status().message()));
  }
  const scheduler::CycleInput in{.pod = &*pod,
                                 .profile = profile->get(),
                                 .cache = &c,
                                 .batch_size = 5000,
                                 .start = 0,
                                 .rng = nullptr,
                                 .plans = nullptr};
  absl::StatusOr<scheduler::CyclePlan> plan =
      scheduler::PrepareCycle(in, *scorer->client);
  if (!plan.ok()) {
    return ErrorAnswer(index, std::string(plan.status().message()));
  }
  // The shim's own request head, with the detail raised to DETAIL_FULL
  // (the default value, so it cannot be appended as an override).
  pb::EvaluateRequest head;
  if (!head.ParseFromString(scheduler::RequestHead(*pod, **profile, *plan))) {
    return ErrorAnswer(index, "the shim's request head does not parse");
  }
  head.set_detail(pb::DETAIL_FULL);
  std::string req = head.SerializeAsString();
  std::vector<std::string> order;
  for (const json& n : input.at("nodes")) {
    order.push_back(n.at("metadata").at("name").get<std::string>());
  }
  std::vector<std::string> names;
  c.AppendNamed(*pod, (*profile)->label_count_keys, order, plan->node_labels,
                pb::EvaluateRequest::kNodesFieldNumber, &req, &names,
                plan->prepared.get());
  google::protobuf::Arena arena;
  std::vector<absl::StatusOr<pb::EvaluateResponse*>> results =
      scorer->client->EvaluateAll({req}, &arena);
  if (!results.front().ok()) {
    return ErrorAnswer(index, std::string(results.front().status().message()));
  }
  const pb::EvaluateResponse& resp = **results.front();

  json weights = json::object();
  for (const pb::Profile& p : scorer->listed.profiles()) {
    if (p.scheduler_name() != kProfile) continue;
    for (const pb::PluginInfo& info : p.plugins()) {
      const auto& points = info.extension_points();
      if (std::find(points.begin(), points.end(), "Score") != points.end()) {
        weights[info.name()] = info.weight();
      }
    }
  }
  json out = {{"index", index},
              {"preFilter", StatusJson(resp.status())},
              {"nodes", json::array()},
              {"skipped", json::array()},
              {"weights", weights}};
  if (resp.status().code() != pb::CODE_SUCCESS) return out;
  if (static_cast<size_t>(resp.filter_size()) != names.size()) {
    return ErrorAnswer(
        index, absl::StrCat("the scorer answered ", resp.filter_size(),
                            " filter verdicts for ", names.size(), " nodes"));
  }
  std::map<std::string, const pb::NodeScore*> scores;
  for (const pb::NodeScore& s : resp.scores()) scores[s.node_name()] = &s;
  for (size_t i = 0; i < names.size(); ++i) {
    json node = {{"name", names[i]},
                 {"filter", StatusJson(resp.filter(static_cast<int>(i)))}};
    if (auto it = scores.find(names[i]); it != scores.end()) {
      json per = json::object();
      for (int k = 0; k < resp.plugins_size(); ++k) {
        per[resp.plugins(k)] = {{"raw", it->second->raw(k)},
                                {"normalized", it->second->normalized(k)}};
      }
      node["scores"] = per;
    }
    out["nodes"].push_back(node);
  }
  std::vector<std::string> skipped(resp.skipped().begin(),
                                   resp.skipped().end());
  std::sort(skipped.begin(), skipped.end());
  out["skipped"] = skipped;
  return out;
}

int Run() {
  std::ifstream cases(absl::GetFlag(FLAGS_cases));
  std::ofstream out(absl::GetFlag(FLAGS_out));
  if (!cases || !out) {
    std::cerr << "oracle_driver: --cases must name a readable file and --out "
                 "a writable one\n";
    return 2;
  }
  std::map<std::string, std::unique_ptr<Scorer>> scorers;
  std::string line;
  int64_t n = 0;
  while (std::getline(cases, line)) {
    if (line.empty()) continue;
    json c = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (c.is_discarded() || !c.contains("index") || !c.contains("input")) {
      std::cerr << "oracle_driver: line " << n + 1 << " is not a case\n";
      return 2;
    }
    const int64_t index = c.at("index").get<int64_t>();
    json answer;
    try {
      answer = Answer(index, c.at("input"), scorers);
    } catch (const json::exception& e) {
      answer = ErrorAnswer(index, e.what());
    }
    out << answer.dump() << "\n";
    ++n;
  }
  std::cerr << "oracle_driver: " << n << " cases answered with "
            << scorers.size() << " configurations\n";
  return 0;
}

}  // namespace
}  // namespace kscore

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  spdlog::set_level(spdlog::level::warn);
  return kscore::Run();
}
