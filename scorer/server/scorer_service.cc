#include "scorer/server/scorer_service.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "common/grpc_status.h"
#include "common/status_macros.h"
#include "scorer/framework/scalar_resources.h"
#include "spdlog/spdlog.h"

namespace kscore::server {
namespace {

using framework::CycleState;
using framework::PluginStatus;
using framework::Profile;

grpc::Status Invalid(const std::string& msg) {
  return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, msg);
}

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

// InvalidArgument naming the field when r's extended resources repeat a name
// (or have none); OK otherwise. `path` is called only for an error: the
// check runs for every node of every batch.
template <typename PathFn>
absl::Status CheckScalarsAt(const pb::Resources& r, PathFn path) {
  std::string e = framework::CheckScalars(r);
  if (e.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(path(), ".", e));
}

absl::Status CheckPodScalars(const pb::Pod& pod) {
  for (int i = 0; i < pod.containers_size(); ++i) {
    absl::Status s = CheckScalarsAt(pod.containers(i).requests(), [i] {
      return absl::StrCat("pod.containers[", i, "].requests");
    });
    if (!s.ok()) return s;
  }
  for (int i = 0; i < pod.init_containers_size(); ++i) {
    absl::Status s = CheckScalarsAt(pod.init_containers(i).requests(), [i] {
      return absl::StrCat("pod.init_containers[", i, "].requests");
    });
    if (!s.ok()) return s;
  }
  if (absl::Status s = CheckScalarsAt(pod.pod_level_requests(),
                                      [] { return "pod.pod_level_requests"; });
      !s.ok()) {
    return s;
  }
  return CheckScalarsAt(pod.overhead(), [] { return "pod.overhead"; });
}

// Checks what every call needs: a known profile and a pod.
template <typename Req>
absl::StatusOr<const Profile*> Common(const framework::ProfileSet& set,
                                      const Req& req) {
  if (req.profile().empty()) {
    return absl::InvalidArgumentError(
        "profile is required (the pod's schedulerName)");
  }
  const Profile* p = set.Find(req.profile());
  if (p == nullptr) {
    std::vector<std::string> names;
    for (const auto& [name, _] : set.profiles) names.push_back(name);
    return absl::NotFoundError(absl::StrCat(
        "profile \"", req.profile(),
        "\" not found (serving: ", absl::StrJoin(names, ", "), ")"));
  }
  if (!req.has_pod()) return absl::InvalidArgumentError("pod is required");
  if (req.pod().name().empty()) {
    return absl::InvalidArgumentError("pod.name is required");
  }
  if (absl::Status s = CheckPodScalars(req.pod()); !s.ok()) return s;
  return p;
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

// Checks the batch (size, names) and returns pointers to its nodes.
absl::StatusOr<std::vector<const pb::Node*>> Nodes(
    const google::protobuf::RepeatedPtrField<pb::Node>& nodes, int max_batch) {
  if (nodes.size() > max_batch) {
    return absl::InvalidArgumentError(absl::StrCat(
        "nodes: batch of ", nodes.size(), " nodes is larger than the limit of ",
        max_batch, " (--max-batch-nodes); split it"));
  }
  std::vector<const pb::Node*> out;
  out.reserve(nodes.size());
  absl::flat_hash_map<absl::string_view, int> seen;
  seen.reserve(nodes.size());
  for (int i = 0; i < nodes.size(); ++i) {
    const std::string& name = nodes[i].name();
    if (name.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("nodes[", i, "].name is required"));
    }
    if (auto [it, inserted] = seen.emplace(name, i); !inserted) {
      return absl::InvalidArgumentError(
          absl::StrCat("nodes[", i, "].name: duplicate node name \"", name,
                       "\" (also nodes[", it->second, "])"));
    }
    for (const auto& [field, r] :
         {std::pair<const char*, const pb::Resources*>{"allocatable",
                                                       &nodes[i].allocatable()},
          {"requested", &nodes[i].requested()},
          {"non_zero_requested", &nodes[i].non_zero_requested()}}) {
      absl::Status s = CheckScalarsAt(
          *r, [i, f = field] { return absl::StrCat("nodes[", i, "].", f); });
      if (!s.ok()) return s;
    }
    out.push_back(&nodes[i]);
  }
  return out;
}

CycleState StateFrom(const google::protobuf::Map<std::string, std::string>& m) {
  CycleState::Bytes bytes;
  bytes.reserve(m.size());
  for (const auto& [k, v] : m) bytes.emplace(k, v);
  return CycleState(std::move(bytes));
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

// DETAIL_TOTALS: rejected nodes by index, then the feasible nodes' raw scores
// (node after node) and totals, without names or per-node messages.
void TotalsTo(const framework::Evaluation& ev, bool normalized,
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
  }
  for (const std::string& s : ev.skipped) resp->add_skipped(s);
}

}  // namespace

ScorerService::ScorerService(const framework::ProfileSet* profiles,
                             ServiceOptions options)
    : profiles_(profiles), options_(options) {
  SetMessageAllocatorFor_Filter(&filter_alloc_);
  SetMessageAllocatorFor_PreScore(&pre_score_alloc_);
  SetMessageAllocatorFor_Score(&score_alloc_);
  SetMessageAllocatorFor_NormalizeScore(&normalize_alloc_);
  SetMessageAllocatorFor_Evaluate(&evaluate_alloc_);
}

grpc::Status ScorerService::DoListProfiles(const pb::ListProfilesRequest*,
                                           pb::ListProfilesResponse* resp) {
  return Counted("ListProfiles", [&] {
    resp->set_config_hash(profiles_->config_hash);
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
    return grpc::Status::OK;
  });
}

grpc::Status ScorerService::DoPlan(const pb::PlanRequest* req,
                                   pb::PlanResponse* resp) {
  return Counted("Plan", [&] {
    if (absl::Status s = CheckConfigHash(*profiles_, req->config_hash());
        !s.ok()) {
      return common::ToGrpcStatus(s);
    }
    KSCORE_ASSIGN_OR_RETURN(auto profile, Common(*profiles_, *req),
                            common::ToGrpcStatus);
    *resp = profile->Plan(req->pod());
    return grpc::Status::OK;
  });
}

grpc::Status ScorerService::DoPreFilter(const pb::PreFilterRequest* req,
                                        pb::PreFilterResponse* resp) {
  return Counted("PreFilter", [&] {
    KSCORE_ASSIGN_OR_RETURN(auto profile, Common(*profiles_, *req),
                            common::ToGrpcStatus);
    CycleState state;
    if (absl::Status s =
            profile->BindCluster(state, req->pod(), req->cluster(), {});
        !s.ok()) {
      return common::ToGrpcStatus(s);
    }
    KSCORE_ASSIGN_OR_RETURN(
        auto status,
        profile->RunPreFilter(state, req->pod(), options_.extension_points),
        common::ToGrpcStatus);
    ToProto(status, resp->mutable_status());
    StateTo(state, resp->mutable_cycle_state());
    return grpc::Status::OK;
  });
}

grpc::Status ScorerService::DoFilter(const pb::FilterRequest* req,
                                     pb::FilterResponse* resp) {
  return Counted("Filter", [&] {
    KSCORE_ASSIGN_OR_RETURN(auto profile, Common(*profiles_, *req),
                            common::ToGrpcStatus);
    KSCORE_ASSIGN_OR_RETURN(auto nodes,
                            Nodes(req->nodes(), options_.max_batch_nodes),
                            common::ToGrpcStatus);
    CycleState state = StateFrom(req->cycle_state());
    if (absl::Status s =
            profile->BindCluster(state, req->pod(), req->cluster(), nodes);
        !s.ok()) {
      return common::ToGrpcStatus(s);
    }
    KSCORE_ASSIGN_OR_RETURN(
        auto statuses,
        profile->RunFilter(state, req->pod(), nodes, options_.extension_points),
        common::ToGrpcStatus);
    for (const PluginStatus& s : statuses) ToProto(s, resp->add_statuses());
    return grpc::Status::OK;
  });
}

grpc::Status ScorerService::DoPreScore(const pb::PreScoreRequest* req,
                                       pb::PreScoreResponse* resp) {
  return Counted("PreScore", [&] {
    KSCORE_ASSIGN_OR_RETURN(auto profile, Common(*profiles_, *req),
                            common::ToGrpcStatus);
    KSCORE_ASSIGN_OR_RETURN(auto nodes,
                            Nodes(req->nodes(), options_.max_batch_nodes),
                            common::ToGrpcStatus);
    CycleState state = StateFrom(req->cycle_state());
    if (absl::Status s =
            profile->BindCluster(state, req->pod(), req->cluster(), nodes);
        !s.ok()) {
      return common::ToGrpcStatus(s);
    }
    KSCORE_ASSIGN_OR_RETURN(auto skipped,
                            profile->RunPreScore(state, req->pod(), nodes,
                                                 options_.extension_points),
                            common::ToGrpcStatus);
    for (const std::string& s : skipped) resp->add_skipped(s);
    StateTo(state, resp->mutable_cycle_state());
    return grpc::Status::OK;
  });
}

grpc::Status ScorerService::DoScore(const pb::ScoreRequest* req,
                                    pb::ScoreResponse* resp) {
  return Counted("Score", [&] {
    KSCORE_ASSIGN_OR_RETURN(auto profile, Common(*profiles_, *req),
                            common::ToGrpcStatus);
    KSCORE_ASSIGN_OR_RETURN(auto nodes,
                            Nodes(req->nodes(), options_.max_batch_nodes),
                            common::ToGrpcStatus);
    CycleState state = StateFrom(req->cycle_state());
    if (absl::Status s =
            profile->BindCluster(state, req->pod(), req->cluster(), nodes);
        !s.ok()) {
      return common::ToGrpcStatus(s);
    }
    std::vector<std::string> skipped(req->skipped().begin(),
                                     req->skipped().end());
    KSCORE_ASSIGN_OR_RETURN(auto table,
                            profile->RunScore(state, req->pod(), nodes, skipped,
                                              options_.extension_points),
                            common::ToGrpcStatus);
    TableTo(table, nodes, resp->mutable_plugins(), nullptr,
            resp->mutable_scores());
    return grpc::Status::OK;
  });
}

grpc::Status ScorerService::DoNormalizeScore(
    const pb::NormalizeScoreRequest* req, pb::NormalizeScoreResponse* resp) {
  return Counted("NormalizeScore", [&] {
    if (absl::Status s = CheckConfigHash(*profiles_, req->config_hash());
        !s.ok()) {
      return common::ToGrpcStatus(s);
    }
    KSCORE_ASSIGN_OR_RETURN(auto profile, Common(*profiles_, *req),
                            common::ToGrpcStatus);
    framework::ScoreTable table;
    for (int k = 0; k < req->plugins_size(); ++k) {
      const framework::ScorePlugin* p =
          profile->FindScorePlugin(req->plugins(k));
      if (p == nullptr) {
        return Invalid(absl::StrCat("plugins[", k, "]: \"", req->plugins(k),
                                    "\" is not a score plugin of profile \"",
                                    req->profile(), "\""));
      }
      table.plugins.push_back(p);
      table.weights.push_back(profile->WeightOf(req->plugins(k)));
      table.raw.emplace_back().reserve(req->scores_size());
    }
    const bool compact = req->raw_size() > 0;
    if (compact) {
      if (req->scores_size() > 0) {
        return Invalid("raw and scores are exclusive: send one of them");
      }
      const int k = req->plugins_size();
      if (k == 0 || req->raw_size() % k != 0) {
        return Invalid(absl::StrCat("raw has ", req->raw_size(),
                                    " values, not a multiple of the ", k,
                                    " plugins"));
      }
      for (int i = 0; i < req->raw_size(); ++i) {
        table.raw[i % k].push_back(req->raw(i));
      }
    }
    table.nodes.reserve(req->scores_size());
    for (int i = 0; i < req->scores_size(); ++i) {
      const pb::NodeScore& ns = req->scores(i);
      table.nodes.emplace_back(ns.node_name());
      if (ns.raw_size() != req->plugins_size()) {
        return Invalid(absl::StrCat("scores[", i, "].raw has ", ns.raw_size(),
                                    " values for ", req->plugins_size(),
                                    " plugins"));
      }
      for (int k = 0; k < ns.raw_size(); ++k) table.raw[k].push_back(ns.raw(k));
    }
    CycleState state = StateFrom(req->cycle_state());
    if (absl::Status s =
            profile->BindCluster(state, req->pod(), req->cluster(), {});
        !s.ok()) {
      return common::ToGrpcStatus(s);
    }
    if (absl::Status s = profile->RunNormalizeScore(state, req->pod(), table,
                                                    options_.extension_points);
        !s.ok()) {
      return common::ToGrpcStatus(s);
    }
    for (size_t k = 0; k < table.plugins.size(); ++k) {
      resp->add_plugins(std::string(table.plugins[k]->Name()));
      resp->add_weights(table.weights[k]);
    }
    if (compact) {
      resp->mutable_totals()->Add(table.total.begin(), table.total.end());
      return grpc::Status::OK;
    }
    for (int i = 0; i < req->scores_size(); ++i) {
      pb::NodeScore* ns = resp->add_scores();
      ns->set_node_name(req->scores(i).node_name());
      *ns->mutable_raw() = req->scores(i).raw();
      for (size_t k = 0; k < table.plugins.size(); ++k) {
        ns->add_normalized(table.normalized[k][i]);
      }
      ns->set_total(table.total[i]);
    }
    return grpc::Status::OK;
  });
}

grpc::Status ScorerService::DoEvaluate(const pb::EvaluateRequest* req,
                                       pb::EvaluateResponse* resp) {
  return Counted("Evaluate", [&] {
    if (absl::Status s = CheckConfigHash(*profiles_, req->config_hash());
        !s.ok()) {
      return common::ToGrpcStatus(s);
    }
    KSCORE_ASSIGN_OR_RETURN(auto profile, Common(*profiles_, *req),
                            common::ToGrpcStatus);
    if (!pb::Detail_IsValid(req->detail())) {
      return Invalid(absl::StrCat("detail: unknown value ", req->detail(),
                                  " (DETAIL_FULL or DETAIL_TOTALS)"));
    }
    KSCORE_ASSIGN_OR_RETURN(auto nodes,
                            Nodes(req->nodes(), options_.max_batch_nodes),
                            common::ToGrpcStatus);
    CycleState state;
    if (absl::Status s =
            profile->BindCluster(state, req->pod(), req->cluster(), nodes);
        !s.ok()) {
      return common::ToGrpcStatus(s);
    }
    const framework::EvaluateMode mode =
        req->filter_only()      ? framework::EvaluateMode::kFilterOnly
        : req->skip_normalize() ? framework::EvaluateMode::kRawScores
                                : framework::EvaluateMode::kFull;
    KSCORE_ASSIGN_OR_RETURN(auto ev,
                            profile->Evaluate(state, req->pod(), nodes, mode,
                                              options_.extension_points),
                            common::ToGrpcStatus);
    ToProto(ev.pre_filter, resp->mutable_status());
    StateTo(state, resp->mutable_cycle_state());
    for (const std::string& p : ev.unschedulable_plugins) {
      resp->add_unschedulable_plugins(p);
    }
    if (!ev.pre_filter.ok()) return grpc::Status::OK;
    if (req->detail() == pb::DETAIL_TOTALS) {
      TotalsTo(ev, mode == framework::EvaluateMode::kFull, resp);
      return grpc::Status::OK;
    }
    resp->mutable_filter()->Reserve(static_cast<int>(ev.filter.size()));
    for (const PluginStatus& s : ev.filter) ToProto(s, resp->add_filter());
    std::vector<const pb::Node*> feasible;
    feasible.reserve(ev.feasible.size());
    for (int i : ev.feasible) feasible.push_back(nodes[i]);
    TableTo(ev.scores, feasible, resp->mutable_plugins(),
            resp->mutable_weights(), resp->mutable_scores());
    for (const std::string& s : ev.skipped) resp->add_skipped(s);
    spdlog::debug("Evaluate pod={}/{} profile={} nodes={} feasible={}",
                  req->pod().namespace_(), req->pod().name(), req->profile(),
                  nodes.size(), feasible.size());
    return grpc::Status::OK;
  });
}

}  // namespace kscore::server
