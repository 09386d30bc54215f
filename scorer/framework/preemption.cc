#include "scorer/framework/preemption.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "google/protobuf/util/message_differencer.h"
#include "model/fit_error.h"
#include "model/scalar_resources.h"
#include "scorer/framework/profile.h"

namespace kscore::framework {
namespace {

constexpr absl::string_view kNotHelpful =
    "Preemption is not helpful for scheduling";
constexpr absl::string_view kBindAllHostIp = "0.0.0.0";
constexpr absl::string_view kDefaultProtocol = "TCP";

absl::string_view OrDefault(const std::string& s, absl::string_view def) {
  return s.empty() ? def : absl::string_view(s);
}

bool SamePort(const pb::HostPort& a, const pb::HostPort& b) {
  return a.port() == b.port() &&
         OrDefault(a.protocol(), kDefaultProtocol) ==
             OrDefault(b.protocol(), kDefaultProtocol) &&
         OrDefault(a.host_ip(), kBindAllHostIp) ==
             OrDefault(b.host_ip(), kBindAllHostIp);
}

// into += sign * r; a removal saturates at 0 (a node never holds less than
// nothing, whatever the shim's bookkeeping). Zero cpu and memory are left
// unset, as the shim's aggregates are.
void AddResources(pb::Resources* into, const pb::Resources& r, int sign) {
  auto sum = [sign](int64_t have, int64_t delta) {
    const int64_t v = have + sign * delta;
    return sign < 0 ? std::max<int64_t>(v, 0) : v;
  };
  if (const int64_t v = sum(into->milli_cpu(), r.milli_cpu()); v != 0) {
    into->set_milli_cpu(v);
  } else {
    into->clear_milli_cpu();
  }
  if (const int64_t v = sum(into->memory(), r.memory()); v != 0) {
    into->set_memory(v);
  } else {
    into->clear_memory();
  }
  into->set_ephemeral_storage(
      sum(into->ephemeral_storage(), r.ephemeral_storage()));
  for (const pb::ScalarResource& s : r.scalar()) {
    const int64_t v = sum(model::ScalarValue(*into, s.name()), s.value());
    if (v == 0) {
      model::RemoveScalar(into, s.name());
    } else {
      model::MutableScalar(into, s.name())->set_value(v);
    }
  }
}

bool Counted(const pb::VictimPod& p) {
  return !p.matched_queries().empty() || !p.terms().empty() ||
         !p.claim_refs().empty();
}

int64_t StartOf(const pb::VictimPod& p, absl::Time now) {
  return p.has_start_time_unix_nanos() ? p.start_time_unix_nanos()
                                       : absl::ToUnixNanos(now);
}

Candidate MakeCandidate(const pb::PreemptionNode& node, int index,
                        std::vector<int> victims, int32_t pdb_violations,
                        absl::Time now) {
  Candidate c;
  c.node = index;
  c.pdb_violations = pdb_violations;
  const pb::VictimPod& first = node.pods(victims.front());
  c.highest_priority = first.priority();
  // util.GetEarliestPodStartTime: the earliest start among the victims of
  // the highest priority.
  int32_t max_priority = first.priority();
  int64_t earliest = StartOf(first, now);
  for (int v : victims) {
    const pb::VictimPod& p = node.pods(v);
    c.sum_priorities += int64_t{p.priority()} +
                        int64_t{std::numeric_limits<int32_t>::max()} + 1;
    if (p.priority() == max_priority) {
      earliest = std::min(earliest, StartOf(p, now));
    } else if (p.priority() > max_priority) {
      max_priority = p.priority();
      earliest = StartOf(p, now);
    }
  }
  c.earliest_start_of_highest_unix_nanos = earliest;
  c.victims = std::move(victims);
  return c;
}

// utilerrors.NewAggregate(errs).Error(): one message as it is, several
// distinct ones in brackets.
std::string Aggregate(const std::vector<std::string>& errors) {
  if (errors.size() == 1) return errors.front();
  std::vector<std::string> distinct;
  absl::flat_hash_set<std::string> seen;
  for (const std::string& e : errors) {
    if (seen.insert(e).second) distinct.push_back(e);
  }
  if (distinct.size() == 1) return distinct.front();
  return absl::StrCat("[", absl::StrJoin(distinct, ", "), "]");
}

}  // namespace

DryRunNode::DryRunNode(const PreemptionInput& in, int index,
                       pb::ClusterData* cluster)
    : in_(in),
      index_(index),
      source_(&in.request->nodes(index)),
      node_(source_->node()),
      cluster_(cluster),
      removed_(static_cast<size_t>(source_->pods_size()), false),
      freed_claim_refs_(
          static_cast<size_t>(in.request->pod().volume_claims_size()), 0),
      csi_removed_(static_cast<size_t>(source_->csi_volumes_size()), 0) {
  for (int j = 0; j < node_.term_counts_size(); ++j) {
    term_slot_.emplace(node_.term_counts(j).term(), j);
  }
}

DryRunNode::~DryRunNode() {
  if (cluster_ == nullptr) return;
  const pb::ClusterData& original = in_.request->cluster();
  for (int32_t q : touched_queries_) {
    *cluster_->mutable_answers(q) = original.answers(q);
  }
  for (int32_t t : touched_terms_) {
    cluster_->mutable_existing_terms(t)->set_total(
        original.existing_terms(t).total());
  }
}

void DryRunNode::Remove(int i) {
  if (removed_[i]) return;
  removed_[i] = true;
  Apply(i, -1);
}

void DryRunNode::Add(int i) {
  if (!removed_[i]) return;
  removed_[i] = false;
  Apply(i, +1);
}

void DryRunNode::Apply(int i, int sign) {
  const pb::VictimPod& p = pod(i);
  AddResources(node_.mutable_requested(), p.requests(), sign);
  AddResources(node_.mutable_non_zero_requested(), p.non_zero_requests(), sign);
  node_.set_pod_count(std::max(node_.pod_count() + sign, 0));
  for (const pb::HostPort& port : p.ports()) {
    auto* used = node_.mutable_used_ports();
    if (sign > 0) {
      *used->Add() = port;
      continue;
    }
    auto it = std::find_if(
        used->begin(), used->end(),
        [&port](const pb::HostPort& u) { return SamePort(u, port); });
    if (it != used->end()) used->erase(it);
  }
  // ValidatePreemptRequest checked the indices and that the counts cover
  // the pods, so nothing here goes below zero.
  const pb::ClusterData& original = in_.request->cluster();
  for (int32_t q : p.matched_queries()) {
    const int64_t count = node_.query_counts(q) + sign;
    node_.set_query_counts(q, count);
    if (cluster_ == nullptr) continue;
    pb::QueryAnswer* a = cluster_->mutable_answers(q);
    a->set_total(a->total() + sign);
    // Only this node's domain changed, and only downwards from the
    // original counts: the least count is the original least or this one.
    a->set_min_count(std::min(original.answers(q).min_count(), count));
    touched_queries_.push_back(q);
  }
  for (int32_t t : p.terms()) {
    pb::TermCount* tc = node_.mutable_term_counts(term_slot_.at(t));
    tc->set_count(tc->count() + sign);
    if (cluster_ == nullptr) continue;
    pb::ExistingTerm* e = cluster_->mutable_existing_terms(t);
    e->set_total(e->total() + sign);
    touched_terms_.push_back(t);
  }
  for (int32_t c : p.claim_refs()) freed_claim_refs_[c] -= sign;
  ApplyDisks(p, sign);
  for (int32_t k : p.csi_volumes()) ApplyCsiVolume(k, sign);
  if (Counted(p)) counted_removed_ -= sign;
}

void DryRunNode::ApplyDisks(const pb::VictimPod& p, int sign) {
  auto* disks = node_.mutable_disks();
  for (const pb::InlineDisk& d : p.disks()) {
    if (sign > 0) {
      *disks->Add() = d;
      continue;
    }
    auto it = std::find_if(
        disks->begin(), disks->end(), [&d](const pb::InlineDisk& x) {
          return google::protobuf::util::MessageDifferencer::Equals(x, d);
        });
    if (it != disks->end()) disks->erase(it);
  }
}

void DryRunNode::ApplyCsiVolume(int32_t k, int sign) {
  const pb::CandidateCsiVolume& v = source_->csi_volumes(k);
  const bool was_free = csi_removed_[k] == v.pods();
  csi_removed_[k] -= sign;
  const bool free = csi_removed_[k] == v.pods();
  if (was_free == free) return;
  // A volume no pod uses counts under the attacher of a VolumeAttachment
  // naming it, or not at all.
  const int delta = free ? -1 : 1;
  AddAttached(v.driver(), delta);
  if (v.has_attacher()) AddAttached(v.attacher(), -delta);
  if (!v.has_preemptor_volume()) return;
  auto* in_use = node_.mutable_volumes_in_use();
  if (free) {
    auto it = std::find(in_use->begin(), in_use->end(), v.preemptor_volume());
    if (it != in_use->end()) in_use->erase(it);
  } else {
    in_use->Add(v.preemptor_volume());
  }
}

void DryRunNode::AddAttached(const std::string& driver, int delta) {
  for (pb::CsiDriverUse& d : *node_.mutable_csi_drivers()) {
    if (d.name() == driver) d.set_attached(std::max(d.attached() + delta, 0));
  }
}

absl::StatusOr<PluginStatus> DryRunNode::Filter() {
  if (!in_.pre_filter.ok()) return in_.pre_filter;
  const pb::Node* nodes[] = {&node_};
  const pb::Pod& pod = in_.request->pod();
  if (counted_removed_ == 0 || cluster_ == nullptr) {
    KSCORE_ASSIGN_OR_RETURN(std::vector<PluginStatus> s,
                            in_.profile->RunFilter(*in_.state, pod, nodes));
    return std::move(s.front());
  }
  // The plugins' PreFilter state is made of the cluster data (counts per
  // domain, the least of them, which existing terms reach the pod): made
  // again from the changed copy, it is what upstream's RemovePod/AddPod
  // extensions keep it as.
  CycleState state;
  state.BindCluster(cluster_, in_.query_bases);
  state.BindFreedClaimRefs(freed_claim_refs_);
  KSCORE_ASSIGN_OR_RETURN(PluginStatus pre,
                          in_.profile->RunPreFilter(state, pod));
  if (!pre.ok()) return pre;
  KSCORE_ASSIGN_OR_RETURN(std::vector<PluginStatus> s,
                          in_.profile->RunFilter(state, pod, nodes));
  return std::move(s.front());
}

int PickOneNodeForPreemption(absl::Span<const Candidate> candidates) {
  int best = -1;
  // Larger is better on every criterion, in upstream's order.
  auto key = [](const Candidate& c) {
    return std::make_tuple(-int64_t{c.pdb_violations},
                           -int64_t{c.highest_priority}, -c.sum_priorities,
                           -static_cast<int64_t>(c.victims.size()),
                           c.earliest_start_of_highest_unix_nanos);
  };
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (best < 0 || key(candidates[i]) > key(candidates[best])) {
      best = static_cast<int>(i);
    }
  }
  return best;
}

namespace {

template <typename... Parts>
absl::Status Invalid(const Parts&... parts) {
  return absl::InvalidArgumentError(absl::StrCat(parts...));
}

// The request's node counts: what the shim saw, what it found potential,
// what it sent, in decreasing order.
absl::Status CheckNodeCounts(const pb::PreemptRequest& req) {
  if (req.num_nodes() < 0) {
    return Invalid("num_nodes: ", req.num_nodes(), " is negative");
  }
  if (req.num_potential_nodes() < req.nodes_size()) {
    return Invalid("num_potential_nodes: ", req.num_potential_nodes(),
                   " is less than the ", req.nodes_size(), " nodes sent");
  }
  if (req.num_nodes() < req.num_potential_nodes()) {
    return Invalid("num_nodes: ", req.num_nodes(),
                   " is less than num_potential_nodes (",
                   req.num_potential_nodes(), ")");
  }
  return absl::OkStatus();
}

// A victim's resource list: no negative amount, scalars well formed.
absl::Status CheckResources(const pb::Resources& r, const std::string& path) {
  if (r.milli_cpu() < 0) {
    return Invalid(path, ".milli_cpu: ", r.milli_cpu(), " is negative");
  }
  if (r.memory() < 0) {
    return Invalid(path, ".memory: ", r.memory(), " is negative");
  }
  if (r.ephemeral_storage() < 0) {
    return Invalid(path, ".ephemeral_storage: ", r.ephemeral_storage(),
                   " is negative");
  }
  for (int k = 0; k < r.scalar_size(); ++k) {
    if (r.scalar(k).value() < 0) {
      return Invalid(path, ".scalar[", k, "].value: ", r.scalar(k).value(),
                     " is negative");
    }
  }
  if (std::string e = model::CheckScalars(r); !e.empty()) {
    return Invalid(path, ".", e);
  }
  return absl::OkStatus();
}

// One sent node, and what its victims claimed of its counts so far: each
// plan query and existing term at most as often as the node and the cluster
// count it.
class NodeTally {
 public:
  NodeTally(const pb::Node& node, const pb::ClusterData& cluster,
            std::string path)
      : node_(node),
        cluster_(cluster),
        path_(std::move(path)),
        queries_(node.query_counts_size(), 0) {
    for (const pb::TermCount& tc : node.term_counts()) {
      node_terms_[tc.term()] += tc.count();
    }
  }

  const std::string& path() const { return path_; }

  absl::Status AddQueries(const pb::VictimPod& p, const std::string& pod_path) {
    for (int k = 0; k < p.matched_queries_size(); ++k) {
      const int32_t q = p.matched_queries(k);
      if (q < 0 || q >= node_.query_counts_size() ||
          q >= cluster_.answers_size()) {
        return Invalid(pod_path, ".matched_queries[", k, "]: ", q,
                       " is not an index into the pod's plan queries (",
                       node_.query_counts_size(), " counts on ", path_,
                       ".node, ", cluster_.answers_size(), " cluster.answers)");
      }
      ++queries_[q];
      if (queries_[q] > node_.query_counts(q) ||
          queries_[q] > cluster_.answers(q).total()) {
        return Invalid(pod_path, ".matched_queries[", k, "]: the pods sent ",
                       "count ", queries_[q], " in query ", q, ", more than ",
                       path_, ".node.query_counts[", q, "] (",
                       node_.query_counts(q), ") or cluster.answers[", q,
                       "].total (", cluster_.answers(q).total(), ")");
      }
    }
    return absl::OkStatus();
  }

  absl::Status AddTerms(const pb::VictimPod& p, const std::string& pod_path) {
    for (int k = 0; k < p.terms_size(); ++k) {
      const int32_t t = p.terms(k);
      if (t < 0 || t >= cluster_.existing_terms_size()) {
        return Invalid(pod_path, ".terms[", k, "]: ", t,
                       " is not an index into cluster.existing_terms (",
                       cluster_.existing_terms_size(), " entries)");
      }
      auto have = node_terms_.find(t);
      const int64_t taken = ++terms_taken_[t];
      if (have == node_terms_.end() || taken > have->second ||
          taken > cluster_.existing_terms(t).total()) {
        return Invalid(pod_path, ".terms[", k, "]: the pods sent carry term ",
                       t, " ", taken, " times, more than ", path_,
                       ".node.term_counts (",
                       have == node_terms_.end() ? 0 : have->second,
                       ") or cluster.existing_terms[", t, "].total (",
                       cluster_.existing_terms(t).total(), ")");
      }
    }
    return absl::OkStatus();
  }

 private:
  const pb::Node& node_;
  const pb::ClusterData& cluster_;
  const std::string path_;  // "nodes[i]"
  std::vector<int64_t> queries_;
  absl::flat_hash_map<int32_t, int64_t> node_terms_;
  absl::flat_hash_map<int32_t, int64_t> terms_taken_;
};

// One victim: named, of lower priority than the pod, its resources well
// formed, its queries and terms within its node's counts.
absl::Status CheckVictim(const pb::VictimPod& p, int32_t priority, int j,
                         NodeTally& tally) {
  const std::string pod_path = absl::StrCat(tally.path(), ".pods[", j, "]");
  if (p.name().empty()) return Invalid(pod_path, ".name is required");
  if (p.priority() >= priority) {
    return Invalid(pod_path, ".priority: ", p.priority(),
                   " is not lower than the pod's (", priority,
                   "): only pods of lower priority may be preempted");
  }
  KSCORE_RETURN_IF_ERROR(
      CheckResources(p.requests(), absl::StrCat(pod_path, ".requests")));
  KSCORE_RETURN_IF_ERROR(CheckResources(
      p.non_zero_requests(), absl::StrCat(pod_path, ".non_zero_requests")));
  KSCORE_RETURN_IF_ERROR(tally.AddQueries(p, pod_path));
  return tally.AddTerms(p, pod_path);
}

}  // namespace

namespace {

// PreemptionNode.csi_volumes and the victims' indices into them: each
// volume used by at most `pods` of the node's lower-priority pods, each
// pod naming a volume once.
absl::Status CheckCsiVolumes(const pb::PreemptRequest& req, int i) {
  const pb::PreemptionNode& pn = req.nodes(i);
  std::vector<int32_t> users(static_cast<size_t>(pn.csi_volumes_size()), 0);
  for (int j = 0; j < pn.pods_size(); ++j) {
    absl::flat_hash_set<int32_t> seen;
    for (int32_t k : pn.pods(j).csi_volumes()) {
      if (k < 0 || k >= pn.csi_volumes_size() || !seen.insert(k).second) {
        return Invalid("nodes[", i, "].pods[", j, "].csi_volumes: ", k,
                       " is not an index into nodes[", i,
                       "].csi_volumes, or is there twice");
      }
      ++users[k];
    }
  }
  const int attachable = req.pod().volumes().attachable_size();
  for (int k = 0; k < pn.csi_volumes_size(); ++k) {
    const pb::CandidateCsiVolume& v = pn.csi_volumes(k);
    if (v.pods() < users[k]) {
      return Invalid("nodes[", i, "].csi_volumes[", k, "].pods: ", v.pods(),
                     " is fewer than the ", users[k], " pods using it");
    }
    if (v.has_preemptor_volume() &&
        (v.preemptor_volume() < 0 || v.preemptor_volume() >= attachable)) {
      return Invalid("nodes[", i, "].csi_volumes[", k,
                     "].preemptor_volume: ", v.preemptor_volume(),
                     " is not an index into pod.volumes.attachable");
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidatePreemptRequest(const pb::PreemptRequest& req) {
  KSCORE_RETURN_IF_ERROR(CheckNodeCounts(req));
  for (int i = 0; i < req.nodes_size(); ++i) {
    const pb::PreemptionNode& pn = req.nodes(i);
    NodeTally tally(pn.node(), req.cluster(), absl::StrCat("nodes[", i, "]"));
    for (int j = 0; j < pn.pods_size(); ++j) {
      KSCORE_RETURN_IF_ERROR(
          CheckVictim(pn.pods(j), req.pod().priority(), j, tally));
      for (int32_t c : pn.pods(j).claim_refs()) {
        if (c < 0 || c >= req.pod().volume_claims_size()) {
          return Invalid("nodes[", i, "].pods[", j, "].claim_refs: ", c,
                         " is not an index into pod.volume_claims");
        }
      }
    }
    KSCORE_RETURN_IF_ERROR(CheckCsiVolumes(req, i));
  }
  for (int k = 0; k < req.pdbs_size(); ++k) {
    if (req.pdbs(k).disruptions_allowed() < 0) {
      return Invalid("pdbs[", k, "].disruptions_allowed: ",
                     req.pdbs(k).disruptions_allowed(), " is negative");
    }
  }
  return absl::OkStatus();
}

namespace {

// The dry run's outcome: the candidates (at most num_candidates of each
// kind, those without PDB violations first) and, for the nodes where
// preemption does not help, their reasons.
struct DryRun {
  explicit DryRun(int num_nodes) : fit(num_nodes) {}
  std::vector<Candidate> candidates;
  model::FitErrorBuilder fit;
  int statuses = 0;  // nodes with a status (upstream's NodeToStatus.Len())
  std::vector<std::string> errors;
  bool stopped = false;  // it had enough candidates: upstream stops there
};

// The dry run, node after node in the order sent (upstream starts at a
// random offset; the shim does that). Each list keeps at most
// num_candidates, as upstream's candidateList.
absl::StatusOr<DryRun> DryRunNodes(const PreemptionPolicy& policy,
                                   const PreemptionInput& in) {
  const pb::PreemptRequest& req = *in.request;
  const int32_t num_candidates =
      policy.NumCandidates(req.num_potential_nodes());
  std::optional<pb::ClusterData> cluster;
  for (const pb::PreemptionNode& n : req.nodes()) {
    if (std::any_of(n.pods().begin(), n.pods().end(), Counted)) {
      cluster = req.cluster();
      break;
    }
  }
  std::vector<Candidate> non_violating, violating;
  DryRun run(req.num_nodes());
  for (int i = 0; i < req.nodes_size(); ++i) {
    DryRunNode node(in, i, cluster.has_value() ? &*cluster : nullptr);
    KSCORE_ASSIGN_OR_RETURN(PreemptionPolicy::Victims v,
                            policy.SelectVictimsOnNode(in, node));
    if (v.status.ok() && !v.victims.empty()) {
      std::vector<Candidate>& list =
          v.pdb_violations == 0 ? non_violating : violating;
      if (static_cast<int64_t>(list.size()) < num_candidates) {
        list.push_back(MakeCandidate(req.nodes(i), i, std::move(v.victims),
                                     v.pdb_violations, in.now));
      }
      if (!non_violating.empty() &&
          static_cast<int64_t>(non_violating.size() + violating.size()) >=
              num_candidates) {
        run.stopped = true;
        break;
      }
      continue;
    }
    if (v.status.ok()) {
      v.status = PluginStatus::Error(
          absl::StrCat("expected at least one victim pod on node \"",
                       req.nodes(i).node().name(), "\""));
    }
    if (v.status.code == Code::kError) {
      run.errors.push_back(absl::StrJoin(v.status.reasons, ", "));
    }
    ++run.statuses;
    for (const std::string& r : v.status.reasons) run.fit.AddReason(r);
  }
  run.candidates = std::move(non_violating);
  run.candidates.insert(run.candidates.end(), violating.begin(),
                        violating.end());
  return run;
}

// Why no node was found: the dry run's errors, else upstream's FitError
// over its statuses, every other node of the snapshot (not potential, not
// sent) being one where preemption does not help.
PluginStatus NoCandidateStatus(DryRun& run, int32_t num_nodes) {
  if (!run.errors.empty()) return PluginStatus::Error(Aggregate(run.errors));
  if (run.statuses < num_nodes) {
    run.fit.AddReason(kNotHelpful, num_nodes - run.statuses);
  }
  return PluginStatus::Unschedulable(run.fit.Message());
}

}  // namespace

absl::StatusOr<PostFilterResult> Preempt(const PreemptionPolicy& policy,
                                         const PreemptionInput& in) {
  const pb::PreemptRequest& req = *in.request;
  PostFilterResult out;
  // 1) May the pod preempt at all?
  if (std::string why = policy.IneligibleReason(req); !why.empty()) {
    out.status = PluginStatus::Unschedulable(std::move(why));
    return out;
  }
  if (req.num_nodes() == 0) {
    out.status = PluginStatus::Error("no nodes available");
    return out;
  }
  // 2) The dry run.
  KSCORE_ASSIGN_OR_RETURN(DryRun run, DryRunNodes(policy, in));
  out.partial = !run.stopped && req.nodes_size() < req.num_potential_nodes();
  out.candidates = std::move(run.candidates);
  std::sort(
      out.candidates.begin(), out.candidates.end(),
      [](const Candidate& a, const Candidate& b) { return a.node < b.node; });
  if (out.candidates.empty()) {
    out.status = NoCandidateStatus(run, req.num_nodes());
    return out;
  }
  // 3) The pick.
  out.chosen = PickOneNodeForPreemption(out.candidates);
  const Candidate& best = out.candidates[out.chosen];
  out.status = PluginStatus::Success();
  out.status.reasons.push_back(
      absl::StrCat("found a potential placement for pod on node ",
                   req.nodes(best.node).node().name(), ", preempting ",
                   best.victims.size(), " victims"));
  return out;
}

}  // namespace kscore::framework
