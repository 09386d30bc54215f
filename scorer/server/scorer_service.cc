#include "scorer/server/scorer_service.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "common/grpc_status.h"
#include "common/status_macros.h"
#include "model/wire_numbers.h"
#include "scorer/framework/request_bounds.h"
#include "spdlog/spdlog.h"

namespace kscore::server {
namespace {

// The most windows an update may ask answers for ahead (SessionUpdate.ahead).
constexpr int kMaxAhead = 64;

using framework::CycleState;
using framework::PluginStatus;
using framework::Profile;

pb::Code ToProto(framework::Code c) {
  switch (c) {
    case framework::Code::kSuccess:
      return pb::CODE_SUCCESS;
    case framework::Code::kError:
      return pb::CODE_ERROR;
    case framework::Code::kUnschedulable:
      return pb::CODE_UNSCHEDULABLE;
    case framework::Code::kUnschedulableAndUnresolvable:
      return pb::CODE_UNSCHEDULABLE_AND_UNRESOLVABLE;
    case framework::Code::kSkip:
      return pb::CODE_SKIP;
  }
  return pb::CODE_ERROR;
}

void ToProto(const PluginStatus& s, pb::Status* out) {
  if (s.ok()) return;  // an empty Status is success: keeps responses small
  out->set_code(ToProto(s.code));
  out->set_plugin(s.plugin);
  for (const std::string& r : s.reasons) out->add_reasons(r);
}

// A pod a call is about: present, named, its numbers and resource lists
// well formed.
absl::Status CheckPod(bool has_pod, const pb::Pod& pod,
                      absl::string_view path) {
  if (!has_pod)
    return absl::InvalidArgumentError(absl::StrCat(path, " is required"));
  if (pod.name().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ".name is required"));
  }
  return model::CheckPodNumbers(pod, path);
}

absl::StatusOr<const Profile*> FindProfile(const framework::ProfileSet& set,
                                           const std::string& name) {
  if (name.empty()) {
    return absl::InvalidArgumentError(
        "profile is required (the pod's schedulerName)");
  }
  const Profile* p = set.Find(name);
  if (p == nullptr) {
    std::vector<std::string> names;
    for (const auto& [n, _] : set.profiles) names.push_back(n);
    return absl::NotFoundError(absl::StrCat(
        "profile \"", name,
        "\" not found (serving: ", absl::StrJoin(names, ", "), ")"));
  }
  return p;
}

// The event of a QueueingHint request as plugins' hints see it. The event
// must be one action bit on a named resource, with the objects it implies:
// the after for an add, the before for a delete, both for an update (a
// before sent with an add, or an after with a delete, is not passed on).
// InvalidArgument naming the field otherwise.
absl::StatusOr<model::EventObjects> HintEvent(
    const pb::QueueingHintRequest& req) {
  if (!req.has_event()) return absl::InvalidArgumentError("event is required");
  const pb::ClusterEvent& event = req.event();
  const pb::EventResource resource = event.resource();
  if (resource == pb::EVENT_RESOURCE_UNSPECIFIED ||
      resource == pb::EVENT_RESOURCE_WILDCARD ||
      !pb::EventResource_IsValid(resource)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "event.resource: ", pb::EventResource_Name(resource), " (",
        static_cast<int>(resource), ") is not a resource that changed"));
  }
  const uint32_t action = event.action_type();
  if (action == 0 || (action & (action - 1)) != 0 ||
      (action & ~model::action::kAll) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "event.action_type: want exactly one action bit, got ", action));
  }
  const bool add = action == model::action::kAdd;
  const bool del = action == model::action::kDelete;
  model::EventObjects e;
  e.event = event;
  const bool node = resource == pb::EVENT_RESOURCE_NODE;
  const bool has_old = node ? req.has_old_node() : req.has_old_pod();
  const bool has_new = node ? req.has_new_node() : req.has_new_pod();
  const char* old_field = node ? "old_node" : "old_pod";
  const char* new_field = node ? "new_node" : "new_pod";
  if (!add && !has_old) {
    return absl::InvalidArgumentError(absl::StrCat(
        old_field, " is required for a ", model::EventLabel(event), " event"));
  }
  if (!del && !has_new) {
    return absl::InvalidArgumentError(absl::StrCat(
        new_field, " is required for a ", model::EventLabel(event), " event"));
  }
  if (node) {
    if (!add) e.old_node = &req.old_node();
    if (!del) e.new_node = &req.new_node();
    for (const auto& [field, n] :
         {std::pair<const char*, const pb::Node*>{"old_node", e.old_node},
          {"new_node", e.new_node}}) {
      if (n == nullptr) continue;
      KSCORE_RETURN_IF_ERROR(model::CheckNodeNumbers(*n, field));
    }
  } else {
    if (!add) e.old_pod = &req.old_pod();
    if (!del) e.new_pod = &req.new_pod();
    if (e.old_pod != nullptr) {
      KSCORE_RETURN_IF_ERROR(model::CheckPodNumbers(*e.old_pod, "old_pod"));
    }
    if (e.new_pod != nullptr) {
      KSCORE_RETURN_IF_ERROR(model::CheckPodNumbers(*e.new_pod, "new_pod"));
    }
  }
  return e;
}

// A request planned against another configuration is refused: placing it
// by this replica's rules would mix two configurations in one cluster.
absl::Status CheckConfigHash(const framework::ProfileSet& set,
                             const std::string& expected) {
  if (expected.empty() || expected == set.config_hash) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "configuration hash mismatch: this scorer's is ", set.config_hash,
      ", the request expects ", expected,
      " (scorer replicas, or the shim and the scorer, run different "
      "configurations)"));
}

// What every call about one profile starts with: the configuration hash
// (when the request carries one), a known profile, and the pod (when the
// request is about one).
template <typename Req>
absl::StatusOr<const Profile*> StartCall(const framework::ProfileSet& set,
                                         const Req& req) {
  if constexpr (requires { req.config_hash(); }) {
    KSCORE_RETURN_IF_ERROR(CheckConfigHash(set, req.config_hash()));
  }
  KSCORE_ASSIGN_OR_RETURN(const Profile* p, FindProfile(set, req.profile()));
  if constexpr (requires { req.pod(); }) {
    KSCORE_RETURN_IF_ERROR(CheckPod(req.has_pod(), req.pod(), "pod"));
  }
  return p;
}

constexpr absl::string_view kMaxPlanBytes = "--max-plan-bytes";
constexpr absl::string_view kMaxRequestWork = "--max-request-work";

// The pod's plan checked against --max-plan-bytes, the work of the pod
// against the nodes against --max-request-work, the cluster data's numbers
// checked, then all bound to the cycle's state (Profile::BindCluster checks
// their shape against the pod's plan).
absl::Status BindCluster(const Profile& profile, CycleState& state,
                         const pb::Pod& pod, const pb::ClusterData& cluster,
                         absl::Span<const pb::Node* const> nodes,
                         const ServiceOptions& o) {
  KSCORE_RETURN_IF_ERROR(
      profile.CheckPlanSize(pod, o.max_plan_bytes, kMaxPlanBytes));
  if (const int64_t work = framework::NodesWork(pod, nodes);
      work > o.max_request_work) {
    return framework::CheckWork(
        work, o.max_request_work, "nodes",
        absl::StrCat("the pod's ", pod.ByteSizeLong(), " bytes for each of ",
                     nodes.size(), " nodes and each of their taints"),
        kMaxRequestWork, "send fewer nodes per call");
  }
  KSCORE_RETURN_IF_ERROR(model::CheckClusterNumbers(cluster));
  return profile.BindCluster(state, pod, cluster, nodes);
}

// Checks a batch of `count` nodes (size, names, numbers) and returns
// pointers to them. `node(i)` is the i-th; `field` names its message within
// nodes[i] ("" when nodes[i] is the Node itself, ".node" when it holds one).
template <typename NodeFn>
absl::StatusOr<std::vector<const pb::Node*>> CheckNodes(int count, NodeFn node,
                                                        absl::string_view field,
                                                        int max_batch) {
  if (count > max_batch) {
    return absl::InvalidArgumentError(absl::StrCat(
        "nodes: batch of ", count, " nodes is larger than the limit of ",
        max_batch, " (--max-batch-nodes); split it"));
  }
  std::vector<const pb::Node*> out;
  out.reserve(count);
  absl::flat_hash_map<absl::string_view, int> seen;
  seen.reserve(count);
  for (int i = 0; i < count; ++i) {
    const pb::Node& n = node(i);
    const std::string& name = n.name();
    if (name.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("nodes[", i, "]", field, ".name is required"));
    }
    if (auto [it, inserted] = seen.emplace(name, i); !inserted) {
      return absl::InvalidArgumentError(
          absl::StrCat("nodes[", i, "]", field, ".name: duplicate node name \"",
                       name, "\" (also nodes[", it->second, "])"));
    }
    if (field.empty()) {
      KSCORE_RETURN_IF_ERROR(model::CheckNodeNumbers(n, "nodes", i));
    } else {
      KSCORE_RETURN_IF_ERROR(
          model::CheckNodeNumbers(n, absl::StrCat("nodes[", i, "]", field)));
    }
    out.push_back(&n);
  }
  return out;
}

absl::StatusOr<std::vector<const pb::Node*>> Nodes(
    const google::protobuf::RepeatedPtrField<pb::Node>& nodes, int max_batch) {
  return CheckNodes(
      nodes.size(), [&nodes](int i) -> const pb::Node& { return nodes[i]; }, "",
      max_batch);
}

CycleState StateFrom(const google::protobuf::Map<std::string, std::string>& m) {
  CycleState::Bytes bytes;
  bytes.reserve(m.size());
  for (const auto& [k, v] : m) bytes.emplace(k, v);
  return CycleState(std::move(bytes));
}

// A call's scheduling cycle: its profile, its nodes (checked), and its
// CycleState (the request's, when it carries one) bound to the request's
// cluster data.
struct Cycle {
  const Profile* profile = nullptr;
  std::vector<const pb::Node*> nodes;
  CycleState state;
};

// EvaluateRequest.volume_decisions: how the pod's claims bind on each
// feasible node (EvaluateResponse.node_volumes).
absl::Status VolumesTo(const Cycle& c, const pb::EvaluateRequest& req,
                       const framework::NodeVerdicts& ev,
                       pb::EvaluateResponse* resp) {
  if (!req.volume_decisions() || !ev.pre_filter.ok()) return absl::OkStatus();
  std::vector<const pb::Node*> feasible;
  feasible.reserve(ev.feasible.size());
  for (int i : ev.feasible) feasible.push_back(c.nodes[i]);
  KSCORE_ASSIGN_OR_RETURN(
      std::vector<pb::NodeVolumes> volumes,
      c.profile->DecideVolumes(c.state, req.pod(), feasible));
  for (pb::NodeVolumes& v : volumes) {
    *resp->add_node_volumes() = std::move(v);
  }
  return absl::OkStatus();
}

// The rest of a call's start, after StartCall: its nodes, its state.
// With `resolved` (an Evaluate's nodes, content keys resolved), its nodes
// instead of the request's own.
template <typename Req>
absl::StatusOr<Cycle> BindCycle(const Profile* profile, const Req& req,
                                const ServiceOptions& o,
                                const ResolvedNodes* resolved = nullptr) {
  Cycle c;
  c.profile = profile;
  if (resolved != nullptr) {
    KSCORE_ASSIGN_OR_RETURN(
        c.nodes, CheckNodes(
                     static_cast<int>(resolved->nodes.size()),
                     [resolved](int i) -> const pb::Node& {
                       return *resolved->nodes[static_cast<size_t>(i)];
                     },
                     "", o.max_batch_nodes));
  } else if constexpr (requires { req.nodes(); }) {
    KSCORE_ASSIGN_OR_RETURN(c.nodes, Nodes(req.nodes(), o.max_batch_nodes));
  }
  if constexpr (requires { req.cycle_state(); }) {
    c.state = StateFrom(req.cycle_state());
  }
  KSCORE_RETURN_IF_ERROR(
      BindCluster(*profile, c.state, req.pod(), req.cluster(), c.nodes, o));
  return c;
}

template <typename Req>
absl::StatusOr<Cycle> StartCycle(const framework::ProfileSet& set,
                                 const Req& req, const ServiceOptions& o) {
  KSCORE_ASSIGN_OR_RETURN(const Profile* profile, StartCall(set, req));
  return BindCycle(profile, req, o);
}

void StateTo(const CycleState& s,
             google::protobuf::Map<std::string, std::string>* out) {
  for (const auto& [k, v] : s.bytes()) (*out)[k] = v;
}

void TableTo(const framework::ScoreTable& t,
             absl::Span<const pb::Node* const> nodes,
             google::protobuf::RepeatedPtrField<std::string>* plugins,
             google::protobuf::RepeatedField<int32_t>* weights,
             google::protobuf::RepeatedPtrField<pb::NodeScore>* scores) {
  for (size_t k = 0; k < t.plugins.size(); ++k) {
    plugins->Add(std::string(t.plugins[k]->Name()));
    if (weights != nullptr) weights->Add(t.weights[k]);
  }
  scores->Reserve(static_cast<int>(nodes.size()));
  for (size_t i = 0; i < nodes.size(); ++i) {
    pb::NodeScore* ns = scores->Add();
    ns->set_node_name(nodes[i]->name());
    ns->mutable_raw()->Reserve(static_cast<int>(t.plugins.size()));
    for (size_t k = 0; k < t.plugins.size(); ++k) ns->add_raw(t.raw[k][i]);
    if (!t.total.empty()) {
      for (size_t k = 0; k < t.plugins.size(); ++k) {
        ns->add_normalized(t.normalized[k][i]);
      }
      ns->set_total(t.total[i]);
    }
  }
}

// The `top` nodes of `t` with the highest totals (every node when
// negative), highest first, ties in table order: their whole NodeScore,
// indexed by `index_of` (the node's position in the request). Only
// partially sorts, so the cost is in the nodes asked for.
template <typename IndexOf, typename NameOf>
void ExplainTo(const framework::ScoreTable& t, int32_t top, IndexOf index_of,
               NameOf name_of,
               google::protobuf::RepeatedPtrField<pb::NodeScore>* scores) {
  const size_t n = t.total.size();
  const size_t k = top < 0 ? n : std::min<size_t>(n, static_cast<size_t>(top));
  if (k == 0) return;
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  auto higher = [&t](size_t a, size_t b) {
    return t.total[a] != t.total[b] ? t.total[a] > t.total[b] : a < b;
  };
  std::partial_sort(order.begin(), order.begin() + static_cast<long>(k),
                    order.end(), higher);
  scores->Reserve(static_cast<int>(k));
  for (size_t j = 0; j < k; ++j) {
    const size_t i = order[j];
    pb::NodeScore* ns = scores->Add();
    ns->set_node_name(name_of(i));
    ns->set_index(index_of(i));
    for (size_t p = 0; p < t.plugins.size(); ++p) {
      ns->add_raw(t.raw[p][i]);
      ns->add_normalized(t.normalized[p][i]);
    }
    ns->set_total(t.total[i]);
  }
}

// DETAIL_TOTALS: rejected nodes by index, then the feasible nodes' raw scores
// (node after node) and totals, without names or per-node messages; and the
// top nodes' whole NodeScore when the request asks (explain_top).
void TotalsTo(const framework::NodeVerdicts& ev, bool normalized,
              int32_t explain_top, absl::Span<const pb::Node* const> nodes,
              pb::EvaluateResponse* resp) {
  for (size_t i = 0; i < ev.filter.size(); ++i) {
    if (ev.filter[i].ok()) continue;
    pb::RejectedNode* r = resp->add_rejected();
    r->set_index(static_cast<int32_t>(i));
    ToProto(ev.filter[i], r->mutable_status());
  }
  const framework::ScoreTable& t = ev.scores;
  for (size_t k = 0; k < t.plugins.size(); ++k) {
    resp->add_plugins(std::string(t.plugins[k]->Name()));
    resp->add_weights(t.weights[k]);
  }
  const size_t n = ev.feasible.size();
  auto* raw = resp->mutable_raw();
  raw->Reserve(static_cast<int>(n * t.plugins.size()));
  for (size_t i = 0; i < n; ++i) {
    for (size_t k = 0; k < t.plugins.size(); ++k)
      raw->AddAlreadyReserved(t.raw[k][i]);
  }
  if (normalized) {
    // No score plugin (or all skipped): every feasible node totals 0.
    if (t.total.size() == n) {
      resp->mutable_totals()->Add(t.total.begin(), t.total.end());
    } else {
      resp->mutable_totals()->Resize(static_cast<int>(n), 0);
    }
    if (explain_top != 0) {
      ExplainTo(
          t, explain_top,
          [&ev](size_t i) { return static_cast<int32_t>(ev.feasible[i]); },
          [&ev, nodes](size_t i) -> const std::string& {
            return nodes[ev.feasible[i]]->name();
          },
          resp->mutable_scores());
    }
  }
  for (const std::string& s : ev.skipped) resp->add_skipped(s);
}

// The shape of NormalizeScore's raw scores, checked before any is copied:
// each plugin named once (the table keeps a row of every node's scores per
// name, so repeated names would multiply the request's nodes), and each
// named node with one raw score per plugin (the rows are reserved for every
// node).
absl::Status CheckNormalizeShape(const pb::NormalizeScoreRequest& req) {
  absl::flat_hash_map<absl::string_view, int> seen;
  seen.reserve(req.plugins_size());
  for (int k = 0; k < req.plugins_size(); ++k) {
    if (auto [it, inserted] = seen.emplace(req.plugins(k), k); !inserted) {
      return absl::InvalidArgumentError(
          absl::StrCat("plugins[", k, "]: \"", req.plugins(k),
                       "\" is listed twice (also plugins[", it->second, "])"));
    }
  }
  for (int i = 0; i < req.scores_size(); ++i) {
    if (req.scores(i).raw_size() != req.plugins_size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("scores[", i, "].raw has ", req.scores(i).raw_size(),
                       " values for ", req.plugins_size(), " plugins"));
    }
  }
  return absl::OkStatus();
}

// NormalizeScore's table before normalising: the named plugins with their
// weights, and the range each one's raw scores must lie in. Raw scores come
// from the client: each must be one its plugin's Score could give, or
// normalising could leave [0, 100] (INTERNAL).
absl::StatusOr<std::vector<model::ScoreRange>> NormalizePlugins(
    const Profile& profile, const pb::NormalizeScoreRequest& req,
    framework::ScoreTable& table) {
  std::vector<model::ScoreRange> ranges;
  ranges.reserve(req.plugins_size());
  for (int k = 0; k < req.plugins_size(); ++k) {
    const framework::ScorePlugin* p = profile.FindScorePlugin(req.plugins(k));
    if (p == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "plugins[", k, "]: \"", req.plugins(k),
          "\" is not a score plugin of profile \"", req.profile(), "\""));
    }
    table.plugins.push_back(p);
    table.weights.push_back(profile.WeightOf(req.plugins(k)));
    table.raw.emplace_back().reserve(req.scores_size());
    ranges.push_back(p->RawScoreRange());
  }
  return ranges;
}

// The compact form: raw, node after node, plugin after plugin.
absl::Status CompactRawScores(const pb::NormalizeScoreRequest& req,
                              absl::Span<const model::ScoreRange> ranges,
                              framework::ScoreTable& table) {
  if (req.scores_size() > 0) {
    return absl::InvalidArgumentError(
        "raw and scores are exclusive: send one of them");
  }
  const int k = req.plugins_size();
  if (k == 0 || req.raw_size() % k != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("raw has ", req.raw_size(),
                     " values, not a multiple of the ", k, " plugins"));
  }
  for (int i = 0; i < req.raw_size(); ++i) {
    const int64_t v = req.raw(i);
    KSCORE_RETURN_IF_ERROR(
        model::CheckRawScore(v, ranges[i % k], req.plugins(i % k),
                             [i] { return absl::StrCat("raw[", i, "]"); }));
    table.raw[i % k].push_back(v);
  }
  return absl::OkStatus();
}

// The named form: one NodeScore a node, its raw scores per plugin.
absl::Status NamedRawScores(const pb::NormalizeScoreRequest& req,
                            absl::Span<const model::ScoreRange> ranges,
                            framework::ScoreTable& table) {
  table.nodes.reserve(req.scores_size());
  for (int i = 0; i < req.scores_size(); ++i) {
    const pb::NodeScore& ns = req.scores(i);
    table.nodes.emplace_back(ns.node_name());
    for (int k = 0; k < ns.raw_size(); ++k) {
      KSCORE_RETURN_IF_ERROR(model::CheckRawScore(
          ns.raw(k), ranges[k], req.plugins(k),
          [i, k] { return absl::StrCat("scores[", i, "].raw[", k, "]"); }));
      table.raw[k].push_back(ns.raw(k));
    }
  }
  return absl::OkStatus();
}

// The normalised table in the request's form: totals (and the top nodes
// explained when asked) for the compact form, whole NodeScores otherwise.
void NormalizedTo(const pb::NormalizeScoreRequest& req,
                  const framework::ScoreTable& table,
                  const std::string& replica,
                  pb::NormalizeScoreResponse* resp) {
  for (size_t k = 0; k < table.plugins.size(); ++k) {
    resp->add_plugins(std::string(table.plugins[k]->Name()));
    resp->add_weights(table.weights[k]);
  }
  if (req.raw_size() > 0) {
    resp->mutable_totals()->Add(table.total.begin(), table.total.end());
    if (req.explain_top() != 0) {
      resp->set_replica(replica);
      ExplainTo(
          table, req.explain_top(),
          [](size_t i) { return static_cast<int32_t>(i); },
          [](size_t) { return std::string(); }, resp->mutable_scores());
    }
    return;
  }
  for (int i = 0; i < req.scores_size(); ++i) {
    pb::NodeScore* ns = resp->add_scores();
    ns->set_node_name(req.scores(i).node_name());
    *ns->mutable_raw() = req.scores(i).raw();
    for (size_t k = 0; k < table.plugins.size(); ++k) {
      ns->add_normalized(table.normalized[k][i]);
    }
    ns->set_total(table.total[i]);
  }
}

// A QueueingHint query's pod and plugin names; errors name the query.
absl::Status CheckHintQuery(const pb::HintQuery& q, const std::string& path) {
  KSCORE_RETURN_IF_ERROR(
      CheckPod(q.has_pod(), q.pod(), absl::StrCat(path, ".pod")));
  for (int j = 0; j < q.plugins_size(); ++j) {
    if (q.plugins(j).empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ".plugins[", j, "] is empty"));
    }
  }
  return absl::OkStatus();
}

// A Preempt request's nodes, their victims' numbers and the cluster data's
// numbers, checked before the framework sees them.
absl::StatusOr<std::vector<const pb::Node*>> CheckPreemptNodes(
    const pb::PreemptRequest& req, int max_batch) {
  const auto& nodes = req.nodes();
  KSCORE_ASSIGN_OR_RETURN(
      std::vector<const pb::Node*> checked,
      CheckNodes(
          nodes.size(),
          [&nodes](int i) -> const pb::Node& { return nodes[i].node(); },
          ".node", max_batch));
  for (int i = 0; i < nodes.size(); ++i) {
    for (int j = 0; j < nodes[i].pods_size(); ++j) {
      KSCORE_RETURN_IF_ERROR(model::CheckVictimNumbers(
          nodes[i].pods(j), absl::StrCat("nodes[", i, "].pods[", j, "]")));
    }
  }
  KSCORE_RETURN_IF_ERROR(model::CheckClusterNumbers(req.cluster()));
  return checked;
}

void PostFilterTo(const framework::PostFilterResult& result,
                  pb::PreemptResponse* resp) {
  pb::Status* status = resp->mutable_status();
  status->set_code(ToProto(result.status.code));
  if (!result.status.ok()) {
    status->set_plugin(result.status.plugin);
    for (const std::string& r : result.status.reasons) status->add_reasons(r);
  }
  resp->set_message(absl::StrJoin(result.status.reasons, ", "));
  resp->set_chosen(result.chosen);
  resp->set_partial(result.partial);
  for (const framework::Candidate& c : result.candidates) {
    pb::PreemptionCandidate* out = resp->add_candidates();
    out->set_node(c.node);
    out->mutable_victims()->Add(c.victims.begin(), c.victims.end());
    out->set_pdb_violations(c.pdb_violations);
    out->set_highest_priority(c.highest_priority);
    out->set_sum_priorities(c.sum_priorities);
    out->set_earliest_start_of_highest_unix_nanos(
        c.earliest_start_of_highest_unix_nanos);
  }
}

// A window's slots: its list, then its ranges spelled out (each within
// the session's `slots`, so that a request cannot make it allocate more).
absl::StatusOr<std::vector<int32_t>> WindowSlots(const pb::SlotWindow& w,
                                                 size_t slots, int i) {
  std::vector<int32_t> out(w.slots().begin(), w.slots().end());
  if (w.ranges_size() % 2 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("update.ahead[", i, "].ranges has ", w.ranges_size(),
                     " entries: pairs of first slot and count"));
  }
  for (int j = 0; j < w.ranges_size(); j += 2) {
    const int64_t first = w.ranges(j), count = w.ranges(j + 1);
    if (first < 0 || count < 0 || first + count > static_cast<int64_t>(slots)) {
      return absl::InvalidArgumentError(
          absl::StrCat("update.ahead[", i, "].ranges[", j, "]: slots ", first,
                       " to ", first + count - 1, " are not all slots (0..",
                       static_cast<int64_t>(slots) - 1, ")"));
    }
    for (int64_t k = first; k < first + count; ++k)
      out.push_back(static_cast<int32_t>(k));
  }
  return out;
}

}  // namespace

ScorerService::ScorerService(const framework::ProfileSet* profiles,
                             ServiceOptions options)
    : profiles_(profiles),
      options_(options),
      sessions_(options.max_sessions, options.max_session_bytes),
      nodes_(options.max_kept_nodes) {
  SetMessageAllocatorFor_Filter(&filter_alloc_);
  SetMessageAllocatorFor_PreScore(&pre_score_alloc_);
  SetMessageAllocatorFor_Score(&score_alloc_);
  SetMessageAllocatorFor_NormalizeScore(&normalize_alloc_);
  SetMessageAllocatorFor_Evaluate(&evaluate_alloc_);
  SetMessageAllocatorFor_Preempt(&preempt_alloc_);
}

grpc::ServerUnaryReactor* ScorerService::Finish(
    grpc::CallbackServerContext* ctx, std::string_view method,
    const absl::Status& status) {
  const grpc::Status answer = common::ToGrpcStatus(status);
  ++served_;
  if (options_.observer != nullptr) {
    options_.observer->OnCall(method, answer.error_code());
  }
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  reactor->Finish(answer);
  return reactor;
}

absl::Status ScorerService::DoListProfiles(const pb::ListProfilesRequest*,
                                           pb::ListProfilesResponse* resp) {
  resp->set_config_hash(profiles_->config_hash);
  resp->set_content_keys(true);
  for (const auto& [name, profile] : profiles_->profiles) {
    pb::Profile* p = resp->add_profiles();
    p->set_scheduler_name(name);
    p->set_percentage_of_nodes_to_score(
        profile->percentage_of_nodes_to_score());
    p->set_node_labels(static_cast<pb::NodeLabels>(profile->node_labels()));
    for (const std::string& k : profile->label_count_keys()) {
      p->add_label_count_keys(k);
    }
    for (pb::PodData d : profile->pod_data()) p->add_pod_data(d);
    p->set_plans(profile->plans());
    p->set_batches(profile->batches());
    p->set_volume_bind_timeout_seconds(profile->volume_bind_timeout_seconds());
    for (const Profile::PluginInfo& info : profile->Describe()) {
      pb::PluginInfo* pi = p->add_plugins();
      pi->set_name(info.name);
      pi->set_weight(info.weight);
      for (const std::string& e : info.extension_points) {
        pi->add_extension_points(e);
      }
      for (const pb::ClusterEvent& e : info.events) *pi->add_events() = e;
    }
  }
  return absl::OkStatus();
}

absl::Status ScorerService::DoPlan(const pb::PlanRequest* req,
                                   pb::PlanResponse* resp) {
  KSCORE_ASSIGN_OR_RETURN(const Profile* profile, StartCall(*profiles_, *req));
  KSCORE_RETURN_IF_ERROR(profile->CheckPlanSize(
      req->pod(), options_.max_plan_bytes, kMaxPlanBytes));
  *resp = profile->Plan(req->pod());
  return absl::OkStatus();
}

absl::Status ScorerService::DoQueueingHint(const pb::QueueingHintRequest* req,
                                           pb::QueueingHintResponse* resp) {
  KSCORE_ASSIGN_OR_RETURN(const Profile* profile, StartCall(*profiles_, *req));
  KSCORE_ASSIGN_OR_RETURN(const model::EventObjects event, HintEvent(*req));
  KSCORE_RETURN_IF_ERROR(framework::CheckWork(
      framework::HintWork(*req), options_.max_request_work, "queries",
      "each query's pod for each taint and host port of the event's objects",
      kMaxRequestWork, "send fewer queries per call"));
  resp->mutable_queue()->Reserve(req->queries_size());
  std::vector<std::string> names;  // a query's plugins, contiguous
  for (int i = 0; i < req->queries_size(); ++i) {
    const pb::HintQuery& q = req->queries(i);
    const std::string path = absl::StrCat("queries[", i, "]");
    KSCORE_RETURN_IF_ERROR(CheckHintQuery(q, path));
    names.assign(q.plugins().begin(), q.plugins().end());
    KSCORE_ASSIGN_OR_RETURN(
        bool queue, profile->QueueingHint(q.pod(), names, event),
        [&path](const absl::Status& s) {
          return absl::Status(s.code(), absl::StrCat(path, ".", s.message()));
        });
    resp->add_queue(queue);
  }
  return absl::OkStatus();
}

absl::Status ScorerService::DoPreFilter(const pb::PreFilterRequest* req,
                                        pb::PreFilterResponse* resp) {
  KSCORE_ASSIGN_OR_RETURN(Cycle c, StartCycle(*profiles_, *req, options_));
  KSCORE_ASSIGN_OR_RETURN(
      PluginStatus status,
      c.profile->RunPreFilter(c.state, req->pod(), options_.extension_points));
  ToProto(status, resp->mutable_status());
  StateTo(c.state, resp->mutable_cycle_state());
  return absl::OkStatus();
}

absl::Status ScorerService::DoFilter(const pb::FilterRequest* req,
                                     pb::FilterResponse* resp) {
  KSCORE_ASSIGN_OR_RETURN(Cycle c, StartCycle(*profiles_, *req, options_));
  KSCORE_ASSIGN_OR_RETURN(std::vector<PluginStatus> statuses,
                          c.profile->RunFilter(c.state, req->pod(), c.nodes,
                                               options_.extension_points));
  for (const PluginStatus& s : statuses) ToProto(s, resp->add_statuses());
  return absl::OkStatus();
}

absl::Status ScorerService::DoPreScore(const pb::PreScoreRequest* req,
                                       pb::PreScoreResponse* resp) {
  KSCORE_ASSIGN_OR_RETURN(Cycle c, StartCycle(*profiles_, *req, options_));
  KSCORE_ASSIGN_OR_RETURN(std::vector<std::string> skipped,
                          c.profile->RunPreScore(c.state, req->pod(), c.nodes,
                                                 options_.extension_points));
  for (const std::string& s : skipped) resp->add_skipped(s);
  StateTo(c.state, resp->mutable_cycle_state());
  return absl::OkStatus();
}

absl::Status ScorerService::DoScore(const pb::ScoreRequest* req,
                                    pb::ScoreResponse* resp) {
  KSCORE_ASSIGN_OR_RETURN(Cycle c, StartCycle(*profiles_, *req, options_));
  std::vector<std::string> skipped(req->skipped().begin(),
                                   req->skipped().end());
  KSCORE_ASSIGN_OR_RETURN(
      framework::ScoreTable table,
      c.profile->RunScore(c.state, req->pod(), c.nodes, skipped,
                          options_.extension_points));
  TableTo(table, c.nodes, resp->mutable_plugins(), nullptr,
          resp->mutable_scores());
  return absl::OkStatus();
}

absl::Status ScorerService::DoNormalizeScore(
    const pb::NormalizeScoreRequest* req, pb::NormalizeScoreResponse* resp) {
  KSCORE_ASSIGN_OR_RETURN(const Profile* profile, StartCall(*profiles_, *req));
  KSCORE_RETURN_IF_ERROR(CheckNormalizeShape(*req));
  framework::ScoreTable table;
  KSCORE_ASSIGN_OR_RETURN(std::vector<model::ScoreRange> ranges,
                          NormalizePlugins(*profile, *req, table));
  if (req->raw_size() > 0) {
    KSCORE_RETURN_IF_ERROR(CompactRawScores(*req, ranges, table));
  }
  KSCORE_RETURN_IF_ERROR(NamedRawScores(*req, ranges, table));
  KSCORE_ASSIGN_OR_RETURN(Cycle c, BindCycle(profile, *req, options_));
  KSCORE_RETURN_IF_ERROR(c.profile->RunNormalizeScore(
      c.state, req->pod(), table, options_.extension_points));
  NormalizedTo(*req, table, options_.replica, resp);
  if (req->keep_session() != 0 && req->raw_size() > 0) {
    KeepSession(req->keep_session(), *profile, req->pod(), req->cluster(),
                table, c.state);
  }
  return absl::OkStatus();
}

void ScorerService::KeepSession(uint64_t id, const framework::Profile& profile,
                                const pb::Pod& pod,
                                const pb::ClusterData& cluster,
                                const framework::ScoreTable& table,
                                const framework::CycleState& state) {
  if (!profile.batches()) return;
  sessions_.Put(id,
                framework::SessionFrom(
                    profile, framework::SessionKey(profile, pod, cluster),
                    framework::FamilyKey(profile, pod, cluster), table, state));
}

std::unique_ptr<framework::Session> ScorerService::TakeSession(
    const framework::Profile& profile, const pb::EvaluateRequest& req) {
  const pb::SessionUpdate& u = req.update();
  std::unique_ptr<framework::Session> s =
      sessions_.Take(u.session(), u.generation());
  if (s == nullptr || s->profile != &profile) return nullptr;
  if (!u.rebase()) {
    if (s->key != framework::SessionKey(profile, req.pod(), req.cluster()))
      return nullptr;
    return s;
  }
  if (s->family != framework::FamilyKey(profile, req.pod(), req.cluster()))
    return nullptr;
  s->key = framework::SessionKey(profile, req.pod(), req.cluster());
  return s;
}

absl::Status ScorerService::DoUpdate(const framework::Profile& profile,
                                     const pb::EvaluateRequest& req,
                                     const ResolvedNodes& resolved,
                                     pb::EvaluateResponse* resp) {
  KSCORE_ASSIGN_OR_RETURN(Cycle c,
                          BindCycle(&profile, req, options_, &resolved));
  const pb::SessionUpdate& u = req.update();
  if (u.ahead_size() > 0 && !u.windowed()) {
    return absl::InvalidArgumentError(
        "update.ahead: only with update.windowed (the windows of later pods "
        "when a share of the nodes is scored)");
  }
  if (u.ahead_size() > kMaxAhead) {
    return absl::InvalidArgumentError(absl::StrCat(
        "update.ahead has ", u.ahead_size(), " windows: at most ", kMaxAhead));
  }
  std::unique_ptr<framework::Session> s = TakeSession(profile, req);
  if (s == nullptr) {
    resp->set_session_missing(true);
    return absl::OkStatus();
  }
  KSCORE_ASSIGN_OR_RETURN(framework::NodeVerdicts ev,
                          profile.Evaluate(c.state, req.pod(), c.nodes,
                                           framework::EvaluateMode::kRawScores,
                                           options_.extension_points));
  ToProto(ev.pre_filter, resp->mutable_status());
  if (!ev.pre_filter.ok()) return absl::OkStatus();  // the session goes
  // A rebased session normalises with the new pod's PreScore state, which
  // only a node Filter accepts gives.
  if (u.rebase()) {
    if (ev.feasible.empty()) {
      resp->set_session_missing(true);
      return absl::OkStatus();
    }
    s->state = c.state.bytes();
  }
  std::optional<absl::Span<const int32_t>> window;
  if (u.windowed())
    window = absl::MakeConstSpan(u.window().data(), u.window_size());
  KSCORE_ASSIGN_OR_RETURN(
      std::optional<framework::SessionBest> best,
      framework::ApplyUpdate(
          *s, ev, absl::MakeConstSpan(u.slots().data(), u.slots_size()),
          req.pod(), options_.extension_points, window));
  if (!best.has_value()) {
    resp->set_session_missing(true);
    return absl::OkStatus();
  }
  UpdateAnswerTo(req, ev, *best, resp);
  KSCORE_RETURN_IF_ERROR(AheadTo(*s, req, resp));
  KSCORE_RETURN_IF_ERROR(VolumesTo(c, req, ev, resp));
  ++s->generation;
  sessions_.Put(u.session(), std::move(*s));
  return absl::OkStatus();
}

void ScorerService::UpdateAnswerTo(const pb::EvaluateRequest& req,
                                   const framework::NodeVerdicts& ev,
                                   const framework::SessionBest& best,
                                   pb::EvaluateResponse* resp) const {
  // The update's own rejected nodes, so the caller knows their verdicts.
  for (size_t i = 0; i < ev.filter.size(); ++i) {
    if (ev.filter[i].ok()) continue;
    pb::RejectedNode* r = resp->add_rejected();
    r->set_index(static_cast<int32_t>(i));
    ToProto(ev.filter[i], r->mutable_status());
  }
  resp->set_best_total(best.total);
  resp->mutable_best_slots()->Add(best.slots.begin(), best.slots.end());
  resp->set_feasible_slots(best.feasible);
  if (req.explain_top() == 0 || best.table.total.empty()) return;
  // The breakdown by slot: the caller knows the slots' nodes.
  resp->set_replica(options_.replica);
  for (const framework::ScorePlugin* p : best.table.plugins)
    resp->add_plugins(std::string(p->Name()));
  resp->mutable_weights()->Add(best.table.weights.begin(),
                               best.table.weights.end());
  ExplainTo(
      best.table, req.explain_top(), [&best](size_t i) { return best.at[i]; },
      [](size_t) { return std::string(); }, resp->mutable_scores());
}

absl::Status ScorerService::AheadTo(const framework::Session& s,
                                    const pb::EvaluateRequest& req,
                                    pb::EvaluateResponse* resp) const {
  const pb::SessionUpdate& u = req.update();
  for (int i = 0; i < u.ahead_size(); ++i) {
    KSCORE_ASSIGN_OR_RETURN(std::vector<int32_t> slots,
                            WindowSlots(u.ahead(i), s.slots(), i));
    KSCORE_ASSIGN_OR_RETURN(
        framework::SessionBest best,
        framework::BestOver(s, req.pod(), options_.extension_points,
                            absl::MakeConstSpan(slots),
                            absl::StrCat("update.ahead[", i, "].slots")));
    pb::WindowBest* out = resp->add_ahead();
    out->set_best_total(best.total);
    out->mutable_best_slots()->Add(best.slots.begin(), best.slots.end());
    out->set_feasible_slots(best.feasible);
    if (req.explain_top() == 0 || best.table.total.empty()) continue;
    ExplainTo(
        best.table, req.explain_top(), [&best](size_t j) { return best.at[j]; },
        [](size_t) { return std::string(); }, out->mutable_scores());
  }
  return absl::OkStatus();
}

absl::Status ScorerService::DoEvaluate(const pb::EvaluateRequest* req,
                                       pb::EvaluateResponse* resp) {
  KSCORE_ASSIGN_OR_RETURN(const Profile* profile, StartCall(*profiles_, *req));
  if (!pb::Detail_IsValid(req->detail())) {
    return absl::InvalidArgumentError(
        absl::StrCat("detail: unknown value ", req->detail(),
                     " (DETAIL_FULL or DETAIL_TOTALS)"));
  }
  KSCORE_ASSIGN_OR_RETURN(ResolvedNodes resolved,
                          ResolveNodes(nodes_, req->nodes()));
  if (!resolved.missing.empty()) {
    resp->mutable_missing_nodes()->Add(resolved.missing.begin(),
                                       resolved.missing.end());
    return absl::OkStatus();
  }
  if (req->has_update()) return DoUpdate(*profile, *req, resolved, resp);
  KSCORE_ASSIGN_OR_RETURN(Cycle c,
                          BindCycle(profile, *req, options_, &resolved));
  const framework::EvaluateMode mode =
      req->filter_only()      ? framework::EvaluateMode::kFilterOnly
      : req->skip_normalize() ? framework::EvaluateMode::kRawScores
                              : framework::EvaluateMode::kFull;
  KSCORE_ASSIGN_OR_RETURN(framework::NodeVerdicts ev,
                          profile->Evaluate(c.state, req->pod(), c.nodes, mode,
                                            options_.extension_points));
  ToProto(ev.pre_filter, resp->mutable_status());
  StateTo(c.state, resp->mutable_cycle_state());
  for (const std::string& p : ev.unschedulable_plugins) {
    resp->add_unschedulable_plugins(p);
  }
  if (!ev.pre_filter.ok()) return absl::OkStatus();
  if (req->explain_top() != 0) resp->set_replica(options_.replica);
  if (req->keep_session() != 0 && mode == framework::EvaluateMode::kFull) {
    KeepSession(req->keep_session(), *profile, req->pod(), req->cluster(),
                ev.scores, c.state);
  }
  KSCORE_RETURN_IF_ERROR(VolumesTo(c, *req, ev, resp));
  if (req->detail() == pb::DETAIL_TOTALS) {
    TotalsTo(ev, mode == framework::EvaluateMode::kFull, req->explain_top(),
             c.nodes, resp);
    return absl::OkStatus();
  }
  resp->mutable_filter()->Reserve(static_cast<int>(ev.filter.size()));
  for (const PluginStatus& s : ev.filter) ToProto(s, resp->add_filter());
  std::vector<const pb::Node*> feasible;
  feasible.reserve(ev.feasible.size());
  for (int i : ev.feasible) feasible.push_back(c.nodes[i]);
  TableTo(ev.scores, feasible, resp->mutable_plugins(), resp->mutable_weights(),
          resp->mutable_scores());
  for (const std::string& s : ev.skipped) resp->add_skipped(s);
  spdlog::debug("Evaluate pod={}/{} profile={} nodes={} feasible={}",
                req->pod().namespace_(), req->pod().name(), req->profile(),
                c.nodes.size(), feasible.size());
  return absl::OkStatus();
}

absl::Status ScorerService::DoPreempt(const pb::PreemptRequest* req,
                                      pb::PreemptResponse* resp) {
  KSCORE_ASSIGN_OR_RETURN(const Profile* profile, StartCall(*profiles_, *req));
  KSCORE_ASSIGN_OR_RETURN(std::vector<const pb::Node*> checked,
                          CheckPreemptNodes(*req, options_.max_batch_nodes));
  KSCORE_RETURN_IF_ERROR(profile->CheckPlanSize(
      req->pod(), options_.max_plan_bytes, kMaxPlanBytes));
  KSCORE_RETURN_IF_ERROR(framework::CheckWork(
      framework::PreemptWork(*req), options_.max_request_work, "nodes[].pods",
      "the pod, cluster data and pdbs for each victim, and the victims' host "
      "ports for each port used on their node",
      kMaxRequestWork, "send fewer nodes or victims"));
  KSCORE_ASSIGN_OR_RETURN(
      framework::PostFilterResult result,
      profile->RunPostFilter(*req, absl::Now(), options_.extension_points));
  PostFilterTo(result, resp);
  spdlog::debug("Preempt pod={}/{} profile={} nodes={} candidates={} {}",
                req->pod().namespace_(), req->pod().name(), req->profile(),
                checked.size(), result.candidates.size(), resp->message());
  return absl::OkStatus();
}

}  // namespace kscore::server
