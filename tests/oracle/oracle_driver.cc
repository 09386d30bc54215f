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
// With --preempt the cases are the oracle's preemption cases (gen-preempt):
// after Evaluate, the nodes Filter found Unschedulable are the potential
// nodes, and one Preempt call gets all of them (in input order, offset 0)
// with their lower-priority pods and the PodDisruptionBudgets, as the shim
// would send them (storage objects loaded into the cache as for the
// scheduling cases; each victim with the claims and in-tree disks it shares
// with the pod). The answers are compare-preempt's.
//
//   oracle_driver [--preempt] --cases cases.jsonl --out got.jsonl

#include <algorithm>
#include <chrono>
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
#include "google/protobuf/util/message_differencer.h"
#include "grpcpp/grpcpp.h"
#include "kscore/scorer/v1/scorer.grpc.pb.h"
#include "model/config.h"
#include "model/selectors.h"
#include "nlohmann/json.hpp"
#include "scorer/framework/profile_set.h"
#include "scorer/plugins/registry.h"
#include "scorer/server/scorer_service.h"
#include "shim/cache/cache.h"
#include "shim/cache/volume_use.h"
#include "shim/objects/objects.h"
#include "shim/objects/storage.h"
#include "shim/scheduler/cycle.h"
#include "shim/scheduler/profiles.h"
#include "shim/scorer_client/scorer_client.h"
#include "spdlog/spdlog.h"

ABSL_FLAG(std::string, cases, "", "the oracle's cases file (JSON lines)");
ABSL_FLAG(std::string, out, "", "where to write kscore's answers");
ABSL_FLAG(bool, preempt, false,
          "the cases are preemption cases (oracle gen-preempt): answer "
          "with Preempt's decision, for oracle compare-preempt");

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
  // For the calls the shim's client does not make (Preempt).
  std::unique_ptr<pb::Scorer::Stub> stub;
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
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  s->stub = pb::Scorer::NewStub(
      grpc::CreateCustomChannel(absl::StrCat("127.0.0.1:", port),
                                grpc::InsecureChannelCredentials(), args));
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

// Each object of the case's list `key` (absent: none), decoded by `decode`
// and handed to `upsert`.
template <typename Decode, typename Upsert>
absl::Status LoadList(const json& input, const char* key, Decode decode,
                      Upsert upsert) {
  auto it = input.find(key);
  if (it == input.end()) return absl::OkStatus();
  for (const json& o : *it) {
    auto info = decode(o);
    if (!info.ok()) return info.status();
    upsert(std::make_shared<typename decltype(info)::value_type>(
        *std::move(info)));
  }
  return absl::OkStatus();
}

// The volume cases' storage objects (oracle gen --volumes) into what the
// shim's informers feed.
absl::Status LoadStorage(const json& input, cache::Volumes& v) {
  absl::Status s =
      LoadList(input, "storageClasses", objects::StorageClassFromJson,
               [&v](auto o) { v.UpsertClass(std::move(o)); });
  if (s.ok()) {
    s = LoadList(input, "csiDrivers", objects::CsiDriverFromJson,
                 [&v](auto o) { v.UpsertDriver(std::move(o)); });
  }
  if (s.ok()) {
    s = LoadList(input, "csiStorageCapacities", objects::CapacityFromJson,
                 [&v](auto o) { v.UpsertCapacity(std::move(o)); });
  }
  if (s.ok()) {
    s = LoadList(input, "persistentVolumes", objects::VolumeFromJson,
                 [&v](auto o) { v.UpsertVolume(std::move(o)); });
  }
  if (s.ok()) {
    s = LoadList(input, "persistentVolumeClaims", objects::ClaimFromJson,
                 [&v](auto o) { v.UpsertClaim(std::move(o)); });
  }
  return s;
}

absl::Status Load(const json& input, cache::Cache& c) {
  for (const json& n : input.at("nodes")) {
    absl::StatusOr<objects::NodeInfo> node = objects::NodeFromJson(n);
    if (!node.ok()) return node.status();
    c.UpsertNode(node->node, node->images);
  }
  for (const json& p : input.at("pods")) {
    absl::StatusOr<objects::PodInfo> pod = objects::PodFromJson(p);
    if (!pod.ok()) return pod.status();
    c.UpsertAssignedPod(*pod);
  }
  for (const json& ns : input.at("namespaces")) {
    absl::StatusOr<objects::NamespaceInfo> info =
        objects::NamespaceFromJson(ns);
    if (!info.ok()) return info.status();
    c.UpsertNamespace(info->name, info->labels);
  }
  const std::pair<const char*, objects::WorkloadKind> lists[] = {
      {"services", objects::WorkloadKind::kService},
      {"replicaSets", objects::WorkloadKind::kReplicaSet},
      {"statefulSets", objects::WorkloadKind::kStatefulSet},
      {"replicationControllers",
       objects::WorkloadKind::kReplicationController}};
  for (const auto& [list, kind] : lists) {
    for (const json& w : input.at(list)) {
      absl::StatusOr<objects::WorkloadInfo> info =
          objects::WorkloadFromJson(kind, w);
      if (!info.ok()) return info.status();
      c.UpsertWorkload(info->kind, info->namespace_, info->name,
                       info->has_selector, info->selector);
    }
  }
  // NodeVolumeLimits' objects, before the volumes they name: the cache
  // resolves its attachments and pods again as those arrive.
  absl::Status s = LoadList(input, "csiNodes", objects::CsiNodeFromJson,
                            [&c](const auto& o) { c.UpsertCsiNode(*o); });
  if (s.ok()) {
    s = LoadList(input, "volumeAttachments", objects::AttachmentFromJson,
                 [&c](const auto& o) { c.UpsertAttachment(*o); });
  }
  if (!s.ok()) return s;
  return LoadStorage(input, c.volumes());
}

// One case run through the shim and the scorer's Evaluate.
struct Evaluated {
  Scorer* scorer = nullptr;
  objects::PodInfo pod;
  std::shared_ptr<const scheduler::ProfileInfo> profile;
  scheduler::CyclePlan plan;
  pb::EvaluateRequest request;  // as sent (every node, input order)
  pb::EvaluateResponse response;
  std::vector<std::string> names;  // the nodes sent, in order
};

absl::StatusOr<Evaluated> EvaluateCase(
    const json& input, std::map<std::string, std::unique_ptr<Scorer>>& scorers,
    cache::Cache& c) {
  Evaluated out;
  const std::string yaml = input.at("profile").get<std::string>();
  std::unique_ptr<Scorer>& scorer = scorers[yaml];
  if (scorer == nullptr) {
    absl::StatusOr<std::unique_ptr<Scorer>> started = StartScorer(yaml);
    if (!started.ok()) return started.status();
    scorer = *std::move(started);
  }
  out.scorer = scorer.get();
  if (absl::Status s = Load(input, c); !s.ok()) return s;
  absl::StatusOr<objects::PodInfo> pod = objects::PodFromJson(input.at("pod"));
  if (!pod.ok()) return pod.status();
  out.pod = *std::move(pod);
  out.pod.scheduler_name = kProfile;
  // The shim never schedules a pod that names its node (spec.nodeName makes
  // it bound), so its decoders leave pb::Pod.node_name to direct callers of
  // the scorer; the generator's pods that name a node test NodeName that way.
  out.pod.pod.set_node_name(out.pod.node_name);
  out.pod.node_name.clear();
  absl::StatusOr<std::shared_ptr<const scheduler::ProfileInfo>> profile =
      scorer->lookup->Lookup(kProfile);
  if (!profile.ok()) return profile.status();
  out.profile = *std::move(profile);
  const scheduler::CycleInput in{.pod = &out.pod,
                                 .profile = out.profile.get(),
                                 .cache = &c,
                                 .batch_size = 5000,
                                 .start = 0,
                                 .rng = nullptr,
                                 .plans = nullptr};
  absl::StatusOr<scheduler::CyclePlan> plan =
      scheduler::PrepareCycle(in, *scorer->client);
  if (!plan.ok()) return plan.status();
  out.plan = *std::move(plan);
  // The shim's own request head, with the detail raised to DETAIL_FULL
  // (the default value, so it cannot be appended as an override).
  pb::EvaluateRequest head;
  if (!head.ParseFromString(
          scheduler::RequestHead(out.pod, *out.profile, out.plan))) {
    return absl::InternalError("the shim's request head does not parse");
  }
  head.set_detail(pb::DETAIL_FULL);
  head.set_volume_decisions(true);
  std::string req = head.SerializeAsString();
  std::vector<std::string> order;
  for (const json& n : input.at("nodes")) {
    order.push_back(n.at("metadata").at("name").get<std::string>());
  }
  c.AppendNamed(out.pod, out.profile->label_count_keys, order,
                out.plan.node_labels, pb::EvaluateRequest::kNodesFieldNumber,
                &req, &out.names, out.plan.prepared.get());
  if (!out.request.ParseFromString(req)) {
    return absl::InternalError("the shim's request does not parse");
  }
  google::protobuf::Arena arena;
  std::vector<absl::StatusOr<pb::EvaluateResponse*>> results =
      scorer->client->EvaluateAll({req}, &arena);
  if (!results.front().ok()) return results.front().status();
  out.response = **results.front();
  if (out.response.status().code() == pb::CODE_SUCCESS &&
      static_cast<size_t>(out.response.filter_size()) != out.names.size()) {
    return absl::InternalError(
        absl::StrCat("the scorer answered ", out.response.filter_size(),
                     " filter verdicts for ", out.names.size(), " nodes"));
  }
  return out;
}

// A node's VolumeBinding decisions in the oracle's schema, by claim name.
json VolumeDecisions(const pb::NodeVolumes& v, const pb::Pod& pod) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const pb::ClaimDecision& d : v.claims()) {
    const std::string claim =
        d.claim() >= 0 && d.claim() < pod.volumes().claims_size()
            ? pod.volumes().claims(d.claim()).name()
            : absl::StrCat("#", d.claim());
    out.emplace_back(claim, d.volume());
  }
  std::sort(out.begin(), out.end());
  json list = json::array();
  for (const auto& [claim, volume] : out)
    list.push_back({{"claim", claim}, {"volume", volume}});
  return list;
}

json Answer(int64_t index, const json& input,
            std::map<std::string, std::unique_ptr<Scorer>>& scorers) {
  cache::Cache c;
  absl::StatusOr<Evaluated> ev = EvaluateCase(input, scorers, c);
  if (!ev.ok()) return ErrorAnswer(index, std::string(ev.status().message()));
  const pb::EvaluateResponse& resp = ev->response;
  const std::vector<std::string>& names = ev->names;

  json weights = json::object();
  for (const pb::Profile& p : ev->scorer->listed.profiles()) {
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
  std::map<std::string, const pb::NodeScore*> scores;
  for (const pb::NodeScore& s : resp.scores()) scores[s.node_name()] = &s;
  std::map<std::string, const pb::NodeVolumes*> decisions;
  for (const pb::NodeVolumes& v : resp.node_volumes())
    decisions[v.node_name()] = &v;
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
    if (auto it = decisions.find(names[i]); it != decisions.end())
      node["volumeDecisions"] = VolumeDecisions(*it->second, ev->request.pod());
    out["nodes"].push_back(node);
  }
  std::vector<std::string> skipped(resp.skipped().begin(),
                                   resp.skipped().end());
  std::sort(skipped.begin(), skipped.end());
  out["skipped"] = skipped;
  return out;
}

// ------------------------------------------------------------- preemption

json PreemptErrorAnswer(int64_t index, const std::string& what) {
  return {
      {"index", index},
      {"postFilter", {{"code", "Error"}, {"plugin", ""}, {"message", what}}},
      {"nominatedNode", ""},
      {"victims", json::array()}};
}

const json& Field(const json& obj, const char* key) {
  static const json kNull;
  auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}

std::string StringField(const json& obj, const char* key) {
  const json& v = Field(obj, key);
  return v.is_string() ? v.get<std::string>() : "";
}

// A metav1.LabelSelector from its JSON.
pb::LabelSelector SelectorFromJson(const json& j) {
  pb::LabelSelector out;
  const json& labels = Field(j, "matchLabels");
  if (labels.is_object()) {
    for (const auto& [k, v] : labels.items()) {
      (*out.mutable_match_labels())[k] = v.get<std::string>();
    }
  }
  const json& exprs = Field(j, "matchExpressions");
  if (exprs.is_array()) {
    for (const json& e : exprs) {
      pb::LabelSelectorRequirement* r = out.add_match_expressions();
      r->set_key(StringField(e, "key"));
      r->set_operator_(StringField(e, "operator"));
      const json& values = Field(e, "values");
      if (values.is_array()) {
        for (const json& v : values) r->add_values(v.get<std::string>());
      }
    }
  }
  return out;
}

// upstream's PodTerminatingByPreemption: being deleted, with a
// DisruptionTarget condition the scheduler set.
bool TerminatingByPreemption(const json& pod) {
  if (Field(Field(pod, "metadata"), "deletionTimestamp").is_null()) {
    return false;
  }
  const json& conditions = Field(Field(pod, "status"), "conditions");
  if (!conditions.is_array()) return false;
  for (const json& c : conditions) {
    if (StringField(c, "type") == "DisruptionTarget") {
      return StringField(c, "status") == "True" &&
             StringField(c, "reason") == "PreemptionByScheduler";
    }
  }
  return false;
}

// What a preemption request needs beyond the Evaluate request: the nodes
// as objects (labels, taints), namespaces' labels, the incoming pod.
struct PreemptContext {
  const Evaluated* ev = nullptr;
  std::map<std::string, pb::Node> nodes;  // full, by name
  std::map<std::string, model::LabelMap> namespaces;
};

// The plan's queries whose count on `node` includes `pod` (PodQuery's
// rules, as the shim's cluster index counts).
std::vector<int32_t> MatchedQueries(const PreemptContext& ctx,
                                    const objects::PodInfo& pod,
                                    const pb::Node& node) {
  std::vector<int32_t> out;
  const pb::PlanResponse& plan = ctx.ev->plan.plan;
  const pb::Pod& incoming = ctx.ev->plan.pod;
  if (pod.terminated()) return out;
  auto ns_labels = [&](const std::string& ns) {
    auto it = ctx.namespaces.find(ns);
    return it == ctx.namespaces.end() ? model::LabelMap() : it->second;
  };
  for (int q = 0; q < plan.queries_size(); ++q) {
    const pb::PodQuery& query = plan.queries(q);
    if (pod.deleting && !query.include_terminating()) continue;
    if (query.all_of().empty()) continue;
    bool matches = true;
    for (const pb::PodMatcher& m : query.all_of()) {
      bool in_ns = std::find(m.namespaces().begin(), m.namespaces().end(),
                             pod.namespace_) != m.namespaces().end();
      if (!in_ns && m.has_namespace_selector()) {
        in_ns = model::LabelSelectorMatches(m.namespace_selector(),
                                            ns_labels(pod.namespace_));
      }
      if (!in_ns || !m.has_selector() ||
          !model::LabelSelectorMatches(m.selector(), pod.pod.labels())) {
        matches = false;
        break;
      }
    }
    if (!matches) continue;
    const pb::NodeFilter& f = query.nodes();
    bool counted = true;
    for (const std::string& key : f.required_keys()) {
      counted = counted && node.labels().contains(key);
    }
    if (f.pod_node_affinity()) {
      counted = counted && model::MatchesRequiredNodeAffinity(incoming, node);
    }
    if (f.pod_taints()) {
      counted = counted && model::ToleratesNoScheduleTaints(incoming, node);
    }
    if (!query.topology_key().empty()) {
      counted = counted && node.labels().contains(query.topology_key());
    }
    if (counted) out.push_back(q);
  }
  return out;
}

// The existing terms (cluster.existing_terms) `pod` carries on `node`, once
// per occurrence, on nodes with the term's topology key.
std::vector<int32_t> CarriedTerms(const PreemptContext& ctx,
                                  const objects::PodInfo& pod,
                                  const pb::Node& node) {
  std::vector<int32_t> out;
  const pb::ClusterData& cluster = ctx.ev->request.cluster();
  if (cluster.existing_terms().empty() || pod.terminated()) return out;
  auto carry = [&](pb::TermKind kind, const pb::PodAffinityTerm& term,
                   int32_t weight) {
    if (!node.labels().contains(term.topology_key())) return;
    pb::ExistingTerm mine;
    mine.set_kind(kind);
    *mine.mutable_term() = term;
    mine.set_weight(weight);
    mine.set_namespace_(pod.namespace_);
    for (int t = 0; t < cluster.existing_terms_size(); ++t) {
      pb::ExistingTerm theirs = cluster.existing_terms(t);
      theirs.clear_total();
      if (google::protobuf::util::MessageDifferencer::Equals(mine, theirs)) {
        out.push_back(t);
        return;
      }
    }
  };
  for (const auto& t : pod.pod.pod_affinity().required()) {
    carry(pb::TERM_KIND_REQUIRED_AFFINITY, t, 0);
  }
  for (const auto& t : pod.pod.pod_anti_affinity().required()) {
    carry(pb::TERM_KIND_REQUIRED_ANTI_AFFINITY, t, 0);
  }
  for (const auto& t : pod.pod.pod_affinity().preferred()) {
    carry(pb::TERM_KIND_PREFERRED_AFFINITY, t.term(), t.weight());
  }
  for (const auto& t : pod.pod.pod_anti_affinity().preferred()) {
    carry(pb::TERM_KIND_PREFERRED_ANTI_AFFINITY, t.term(), t.weight());
  }
  return out;
}

// A pod of lower priority than the incoming one, as the shim sends it.
absl::StatusOr<pb::VictimPod> VictimFromJson(const PreemptContext& ctx,
                                             const json& obj,
                                             const pb::Node& node) {
  absl::StatusOr<objects::PodInfo> pod = objects::PodFromJson(obj);
  if (!pod.ok()) return pod.status();
  pb::VictimPod v;
  v.set_namespace_(pod->namespace_);
  v.set_name(pod->name);
  v.set_uid(pod->uid);
  v.set_priority(pod->priority);
  *v.mutable_requests() = pod->requests;
  *v.mutable_non_zero_requests() = pod->non_zero;
  for (const pb::HostPort& p : pod->host_ports) *v.add_ports() = p;
  *v.mutable_labels() = pod->pod.labels();
  const std::string start = StringField(Field(obj, "status"), "startTime");
  if (!start.empty()) {
    v.set_start_time_unix_nanos(absl::ToUnixNanos(objects::ParseTime(start)));
  }
  v.set_terminating(pod->deleting);
  for (int32_t q : MatchedQueries(ctx, *pod, node)) v.add_matched_queries(q);
  for (int32_t t : CarriedTerms(ctx, *pod, node)) v.add_terms(t);
  // VolumeRestrictions' part, as Cache::VictimLocked fills it: the
  // preemptor's claims this pod names, and its in-tree disks like the
  // preemptor's. (NodeVolumeLimits' part: AddCsiVolumes.)
  const cache::VolumeUse::PodUse use = cache::VolumeUse::Of(pod->pod);
  const pb::Pod& preemptor = ctx.ev->request.pod();
  cache::VolumeUse::ClaimRefsInto(use, preemptor, v.mutable_claim_refs());
  cache::VolumeUse::Matching(use, preemptor.inline_disks(), v.mutable_disks());
  return v;
}

pb::DisruptionBudget BudgetFromJson(const json& obj) {
  pb::DisruptionBudget b;
  const json& meta = Field(obj, "metadata");
  b.set_namespace_(StringField(meta, "namespace"));
  b.set_name(StringField(meta, "name"));
  const json& selector = Field(Field(obj, "spec"), "selector");
  if (selector.is_object()) *b.mutable_selector() = SelectorFromJson(selector);
  const json& status = Field(obj, "status");
  const json& allowed = Field(status, "disruptionsAllowed");
  if (allowed.is_number_integer()) {
    b.set_disruptions_allowed(allowed.get<int32_t>());
  }
  const json& disrupted = Field(status, "disruptedPods");
  if (disrupted.is_object()) {
    for (const auto& [name, _] : disrupted.items()) b.add_disrupted_pods(name);
  }
  return b;
}

// NodeVolumeLimits' part of a preemption node, as the shim sends it: the
// CSI volumes the node counts and which of its victims hold which
// (PreemptionNode.csi_volumes, VictimPod.csi_volumes), from `c` (which
// EvaluateCase loaded with the case's CSINodes, VolumeAttachments, claims
// and volumes), as the shim's EncodePreemptionNodes adds them; once per
// node, after the node's victims are added.
void AddCsiVolumes(const cache::Cache& c, const objects::PodInfo& preemptor,
                   pb::PreemptionNode* node) {
  c.AddCandidateCsiVolumes(node->node().name(), preemptor.pod, node);
}

// The potential nodes (indices into ev.names): Filter said Unschedulable
// (a PreFilter rejection that is only Unschedulable makes every node one);
// each node's code into `code_of`.
std::vector<int> PotentialNodes(const Evaluated& ev,
                                std::map<std::string, pb::Code>* code_of) {
  const pb::EvaluateResponse& resp = ev.response;
  std::vector<int> potential;
  for (size_t i = 0; i < ev.names.size(); ++i) {
    const pb::Code code = resp.status().code() == pb::CODE_SUCCESS
                              ? resp.filter(static_cast<int>(i)).code()
                              : resp.status().code();
    (*code_of)[ev.names[i]] = code;
    if (code == pb::CODE_UNSCHEDULABLE) {
      potential.push_back(static_cast<int>(i));
    }
  }
  return potential;
}

// The nodes as objects and the namespaces' labels, for VictimFromJson.
absl::Status FillContext(const json& input, PreemptContext* ctx) {
  for (const json& n : input.at("nodes")) {
    absl::StatusOr<objects::NodeInfo> node = objects::NodeFromJson(n);
    if (!node.ok()) return node.status();
    ctx->nodes[node->node.name()] = node->node;
  }
  for (const json& ns : input.at("namespaces")) {
    absl::StatusOr<objects::NamespaceInfo> info =
        objects::NamespaceFromJson(ns);
    if (!info.ok()) return info.status();
    ctx->namespaces[info->name] = info->labels;
  }
  return absl::OkStatus();
}

// The Preempt request the shim would send for the case: every potential
// node (input order, offset 0) with its lower-priority pods, the PDBs, and
// the nominated node's pods when the pod names one.
absl::StatusOr<pb::PreemptRequest> BuildPreemptRequest(
    const json& input, const PreemptContext& ctx, const cache::Cache& c) {
  const Evaluated& ev = *ctx.ev;
  std::map<std::string, pb::Code> code_of;
  const std::vector<int> potential = PotentialNodes(ev, &code_of);
  const json& pod_json = input.at("pod");
  pb::PreemptRequest req;
  req.set_profile(kProfile);
  req.set_config_hash(ev.profile->config_hash);
  *req.mutable_pod() = ev.request.pod();
  req.mutable_pod()->set_preemption_policy(
      StringField(Field(pod_json, "spec"), "preemptionPolicy"));
  *req.mutable_cluster() = ev.request.cluster();
  std::map<std::string, std::vector<const json*>> pods_on;
  for (const json& p : input.at("pods")) {
    pods_on[StringField(Field(p, "spec"), "nodeName")].push_back(&p);
  }
  auto lower = [&](const std::string& node, auto&& add) -> absl::Status {
    for (const json* p : pods_on[node]) {
      const json& prio = Field(Field(*p, "spec"), "priority");
      const int32_t pp = prio.is_number_integer() ? prio.get<int32_t>() : 0;
      if (pp >= ev.pod.priority) continue;
      absl::StatusOr<pb::VictimPod> v =
          VictimFromJson(ctx, *p, ctx.nodes.at(node));
      if (!v.ok()) return v.status();
      add(*p, *std::move(v));
    }
    return absl::OkStatus();
  };
  for (int i : potential) {
    pb::PreemptionNode* n = req.add_nodes();
    *n->mutable_node() = ev.request.nodes(i);
    absl::Status s = lower(ev.names[i], [n](const json&, pb::VictimPod v) {
      *n->add_pods() = std::move(v);
    });
    if (!s.ok()) return s;
    AddCsiVolumes(c, ev.pod, n);
  }
  for (const json& pdb : input.at("podDisruptionBudgets")) {
    *req.add_pdbs() = BudgetFromJson(pdb);
  }
  req.set_num_nodes(static_cast<int32_t>(ev.names.size()));
  req.set_num_potential_nodes(static_cast<int32_t>(potential.size()));
  const std::string nominated =
      StringField(Field(pod_json, "status"), "nominatedNodeName");
  if (nominated.empty()) return req;
  req.set_nominated_node_name(nominated);
  auto it = code_of.find(nominated);
  if (it == code_of.end() ||
      it->second == pb::CODE_UNSCHEDULABLE_AND_UNRESOLVABLE) {
    return req;
  }
  absl::Status s = lower(nominated, [&req](const json& obj, pb::VictimPod v) {
    v.set_terminating(TerminatingByPreemption(obj));
    *req.add_nominated_node_pods() = std::move(v);
  });
  if (!s.ok()) return s;
  return req;
}

// Preempt's decision in compare-preempt's terms.
json PreemptDecision(int64_t index, const pb::PreemptRequest& req,
                     const pb::PreemptResponse& out) {
  std::vector<std::string> victims;
  std::string node;
  if (out.chosen() >= 0 && out.chosen() < out.candidates_size()) {
    const pb::PreemptionCandidate& c = out.candidates(out.chosen());
    const pb::PreemptionNode& pn = req.nodes(c.node());
    node = pn.node().name();
    for (int v : c.victims()) {
      victims.push_back(
          absl::StrCat(pn.pods(v).namespace_(), "/", pn.pods(v).name()));
    }
  }
  std::sort(victims.begin(), victims.end());
  const bool success = out.status().code() == pb::CODE_SUCCESS;
  return {{"index", index},
          {"postFilter",
           {{"code", CodeName(out.status().code())},
            {"plugin", success ? "" : out.status().plugin()},
            {"message", out.message()}}},
          {"nominatedNode", node},
          {"victims", victims}};
}

json PreemptAnswer(int64_t index, const json& input,
                   std::map<std::string, std::unique_ptr<Scorer>>& scorers) {
  cache::Cache c;
  absl::StatusOr<Evaluated> ev = EvaluateCase(input, scorers, c);
  if (!ev.ok()) {
    return PreemptErrorAnswer(index, std::string(ev.status().message()));
  }
  PreemptContext ctx;
  ctx.ev = &*ev;
  if (absl::Status s = FillContext(input, &ctx); !s.ok()) {
    return PreemptErrorAnswer(index, std::string(s.message()));
  }
  absl::StatusOr<pb::PreemptRequest> req = BuildPreemptRequest(input, ctx, c);
  if (!req.ok()) {
    return PreemptErrorAnswer(index, std::string(req.status().message()));
  }
  grpc::ClientContext ctx_call;
  ctx_call.set_deadline(std::chrono::system_clock::now() +
                        std::chrono::seconds(30));
  pb::PreemptResponse out;
  grpc::Status st = ev->scorer->stub->Preempt(&ctx_call, *req, &out);
  if (!st.ok()) return PreemptErrorAnswer(index, st.error_message());
  return PreemptDecision(index, *req, out);
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
    const bool preempt = absl::GetFlag(FLAGS_preempt);
    json answer;
    try {
      answer = preempt ? PreemptAnswer(index, c.at("input"), scorers)
                       : Answer(index, c.at("input"), scorers);
    } catch (const json::exception& e) {
      answer = preempt ? PreemptErrorAnswer(index, e.what())
                       : ErrorAnswer(index, e.what());
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
