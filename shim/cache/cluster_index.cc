#include "shim/cache/cluster_index.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "model/node_key.h"
#include "shim/objects/objects.h"

namespace kscore::cache {
namespace {

using model::LabelMap;

// "namespace\0k1=v1\0k2=v2..." with keys sorted: one per distinct label set.
std::string SignatureKey(const std::string& ns, const LabelMap& labels) {
  std::vector<std::pair<std::string, std::string>> sorted(labels.begin(),
                                                          labels.end());
  std::sort(sorted.begin(), sorted.end());
  std::string key = ns;
  for (const auto& [k, v] : sorted) {
    key.push_back('\0');
    absl::StrAppend(&key, k, "=", v);
  }
  return key;
}

// Deterministic bytes of a message (map fields sorted), for identity.
std::string Deterministic(const google::protobuf::MessageLite& m) {
  std::string out;
  model::AppendDeterministic(m, &out);
  return out;
}

const std::string* Label(const pb::Node& node, const std::string& key) {
  auto it = node.labels().find(key);
  return it == node.labels().end() ? nullptr : &it->second;
}

// The existing terms a pod carries, one entry per occurrence.
std::vector<pb::ExistingTerm> TermsOf(const pb::Pod& pod) {
  std::vector<pb::ExistingTerm> out;
  auto add = [&](pb::TermKind kind, const pb::PodAffinityTerm& t, int32_t w) {
    pb::ExistingTerm& e = out.emplace_back();
    e.set_kind(kind);
    *e.mutable_term() = t;
    e.set_weight(w);
    e.set_namespace_(pod.namespace_());
  };
  for (const pb::PodAffinityTerm& t : pod.pod_affinity().required()) {
    add(pb::TERM_KIND_REQUIRED_AFFINITY, t, 0);
  }
  for (const pb::PodAffinityTerm& t : pod.pod_anti_affinity().required()) {
    add(pb::TERM_KIND_REQUIRED_ANTI_AFFINITY, t, 0);
  }
  for (const pb::WeightedPodAffinityTerm& t : pod.pod_affinity().preferred()) {
    add(pb::TERM_KIND_PREFERRED_AFFINITY, t.term(), t.weight());
  }
  for (const pb::WeightedPodAffinityTerm& t :
       pod.pod_anti_affinity().preferred()) {
    add(pb::TERM_KIND_PREFERRED_ANTI_AFFINITY, t.term(), t.weight());
  }
  return out;
}

// Whether a query counts the pods on `node` (PodQuery.nodes and its
// topology key). Of the pod it reads what NodeSideOf keeps.
bool CountsPodsOn(const pb::PodQuery& q, const pb::Pod& pod,
                  const pb::Node& node) {
  const pb::NodeFilter& f = q.nodes();
  bool ok =
      q.topology_key().empty() || Label(node, q.topology_key()) != nullptr;
  for (int i = 0; ok && i < f.required_keys_size(); ++i) {
    ok = Label(node, f.required_keys(i)) != nullptr;
  }
  ok = ok && (!f.pod_node_affinity() ||
              model::MatchesRequiredNodeAffinity(pod, node));
  return ok && (!f.pod_taints() || model::ToleratesNoScheduleTaints(pod, node));
}

// The part of `pod` that CountsPodsOn reads for `q`: its nodeSelector and
// required node affinity (MatchesRequiredNodeAffinity), its tolerations
// (ToleratesNoScheduleTaints), each only when the filter asks.
pb::Pod NodeSideOf(const pb::PodQuery& q, const pb::Pod& pod) {
  pb::Pod out;
  if (q.nodes().pod_node_affinity()) {
    *out.mutable_node_selector() = pod.node_selector();
    pb::NodeAffinity* a = out.mutable_node_affinity();
    *a->mutable_required() = pod.node_affinity().required();
    a->set_has_required(pod.node_affinity().has_required());
  }
  if (q.nodes().pod_taints()) *out.mutable_tolerations() = pod.tolerations();
  return out;
}

// Every input of CountsPodsOn but the node: the topology key, the filter
// and the pod's side of it.
std::string EligibilityKey(const pb::PodQuery& q, const pb::Pod& node_side) {
  pb::PodQuery filter;
  filter.set_topology_key(q.topology_key());
  *filter.mutable_nodes() = q.nodes();
  const std::string head = Deterministic(filter);
  return absl::StrCat(head.size(), ":", head, Deterministic(node_side));
}

bool SameLabels(const LabelMap& a, const LabelMap& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [k, v] : a) {
    auto it = b.find(k);
    if (it == b.end() || it->second != v) return false;
  }
  return true;
}

bool SameLabelsAndTaints(const pb::Node& a, const pb::Node& b) {
  if (!SameLabels(a.labels(), b.labels()) ||
      a.taints_size() != b.taints_size()) {
    return false;
  }
  for (int i = 0; i < a.taints_size(); ++i) {
    if (a.taints(i).SerializeAsString() != b.taints(i).SerializeAsString()) {
      return false;
    }
  }
  return true;
}

// Entries each node-side cache holds at most (distinct topology keys;
// distinct query filters and pod node sides).
constexpr size_t kMaxCached = 64;

template <typename Map>
void Subtract(Map& m, const std::string& key, int64_t by) {
  auto it = m.find(key);
  if (it == m.end()) return;
  if ((it->second -= by) <= 0) m.erase(it);
}

}  // namespace

// A topology key's domains at one node version.
struct ClusterIndex::KeyTable {
  std::vector<int32_t> domain;     // by node id: into names, -1 without it
  std::vector<std::string> names;  // the distinct values
  std::vector<std::vector<int32_t>> members;        // by domain: its nodes' ids
  absl::flat_hash_map<std::string, int32_t> index;  // into names
  bool per_node = true;  // no two nodes share a value
};

// Which nodes a query counts (for one pod's node side) at one node version.
struct ClusterIndex::Eligibility {
  std::shared_ptr<const KeyTable> domains;  // of the query's topology key
  std::vector<int32_t> domain;  // by node id: its domain if counted, else -1
  size_t distinct = 0;          // domains of the counted nodes
};

ClusterIndex::~ClusterIndex() = default;

void ClusterIndex::UpsertNode(const pb::Node& node,
                              std::vector<objects::NodeImage> images) {
  auto [slot, fresh] = nodes_.try_emplace(node.name());
  NodeData& d = slot->second;
  // A status update (most of them) leaves the node-side caches valid.
  if (fresh || !SameLabelsAndTaints(d.node, node)) {
    ++node_version_;
    DropTallies();
  }
  for (const auto& [name, _] : d.images) Subtract(image_nodes_, name, 1);
  d.images.clear();
  d.node.Clear();
  d.node.set_name(node.name());
  *d.node.mutable_labels() = node.labels();
  *d.node.mutable_taints() = node.taints();
  for (const objects::NodeImage& image : images) {
    for (const std::string& name : image.names) {
      d.images[name] = image.size_bytes;
    }
  }
  for (const auto& [name, _] : d.images) ++image_nodes_[name];
}

void ClusterIndex::RemoveNode(const std::string& name) {
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return;
  for (const auto& [image, _] : it->second.images) {
    Subtract(image_nodes_, image, 1);
  }
  nodes_.erase(it);
  ++node_version_;
  DropTallies();
}

ClusterIndex::PodRef ClusterIndex::AddPod(const objects::PodInfo& pod,
                                          const std::string& node) {
  PodRef ref;
  ref.node = node;
  ref.deleting = pod.deleting;
  if (pod.terminated()) return ref;
  const std::string key = SignatureKey(pod.namespace_, pod.pod.labels());
  std::unique_ptr<Signature>& sig = signatures_[key];
  if (sig == nullptr) {
    sig = std::make_unique<Signature>();
    sig->ns = pod.namespace_;
    sig->labels = pod.pod.labels();
    by_namespace_[pod.namespace_].insert(sig.get());
    for (const auto& [_, t] : tallies_) {
      if (MatchesAll(t->matchers, *sig)) {
        sig->tallies.push_back(t.get());
      }
    }
  }
  Counts& c = sig->nodes[node];
  ++c.all;
  if (!pod.deleting) ++c.live;
  ++sig->pods;
  ref.signature = sig.get();
  for (pb::ExistingTerm& e : TermsOf(pod.pod)) {
    std::string id = Deterministic(e);
    std::unique_ptr<Term>& t = terms_[id];
    if (t == nullptr) {
      t = std::make_unique<Term>();
      t->id = std::move(id);
      t->term = std::move(e);
    }
    ++t->nodes[node];
    ++t->pods;
    ref.terms.push_back(t.get());
  }
  CountInTallies(sig.get(), ref.terms, node, 1, pod.deleting ? 0 : 1);
  return ref;
}

void ClusterIndex::RemovePod(const PodRef& ref) {
  CountInTallies(ref.signature, ref.terms, ref.node, -1, ref.deleting ? 0 : -1);
  if (Signature* sig = ref.signature; sig != nullptr) {
    auto it = sig->nodes.find(ref.node);
    if (it != sig->nodes.end()) {
      --it->second.all;
      if (!ref.deleting) --it->second.live;
      if (it->second.all <= 0) sig->nodes.erase(it);
    }
    if (--sig->pods <= 0) {
      auto ns = by_namespace_.find(sig->ns);
      if (ns != by_namespace_.end()) {
        ns->second.erase(sig);
        if (ns->second.empty()) by_namespace_.erase(ns);
      }
      signatures_.erase(SignatureKey(sig->ns, sig->labels));
    }
  }
  for (Term* t : ref.terms) {
    Subtract(t->nodes, ref.node, 1);
    if (--t->pods <= 0) terms_.erase(t->id);
  }
}

bool ClusterIndex::UpsertNamespace(const std::string& name,
                                   const LabelMap& labels) {
  auto [it, fresh] = namespaces_.try_emplace(name, labels);
  if (!fresh) {
    if (SameLabels(it->second, labels)) return false;
    it->second = labels;
  }
  DropTallies();  // what a namespace selector matches
  return true;
}

void ClusterIndex::RemoveNamespace(const std::string& name) {
  if (namespaces_.erase(name) > 0) DropTallies();
}

void ClusterIndex::UpsertWorkload(objects::WorkloadKind kind,
                                  const std::string& ns,
                                  const std::string& name, bool has_selector,
                                  const pb::LabelSelector& selector) {
  if (kind == objects::WorkloadKind::kService) {
    if (has_selector) {
      services_[ns][name] = selector;
    } else {
      RemoveWorkload(kind, ns, name);
    }
    return;
  }
  std::optional<pb::LabelSelector>& slot =
      controllers_[static_cast<int>(kind)][absl::StrCat(ns, "/", name)];
  slot.reset();
  if (has_selector) slot = selector;
}

void ClusterIndex::RemoveWorkload(objects::WorkloadKind kind,
                                  const std::string& ns,
                                  const std::string& name) {
  if (kind == objects::WorkloadKind::kService) {
    auto it = services_.find(ns);
    if (it == services_.end()) return;
    it->second.erase(name);
    if (it->second.empty()) services_.erase(it);
    return;
  }
  auto it = controllers_.find(static_cast<int>(kind));
  if (it != controllers_.end()) it->second.erase(absl::StrCat(ns, "/", name));
}

const LabelMap& ClusterIndex::NamespaceLabels(const std::string& ns) const {
  static const LabelMap* const kEmpty = new LabelMap();
  auto it = namespaces_.find(ns);
  return it == namespaces_.end() ? *kEmpty : it->second;
}

pb::WorkloadSelectors ClusterIndex::WorkloadSelectorsFor(
    const objects::PodInfo& pod) const {
  pb::WorkloadSelectors out;
  if (auto it = services_.find(pod.namespace_); it != services_.end()) {
    // Sorted by name, so the message (and the plan cache key) is stable.
    std::vector<const std::pair<const std::string, pb::LabelSelector>*> hits;
    for (const auto& entry : it->second) {
      if (model::LabelSelectorMatches(entry.second, pod.pod.labels())) {
        hits.push_back(&entry);
      }
    }
    std::sort(hits.begin(), hits.end(),
              [](const auto* a, const auto* b) { return a->first < b->first; });
    for (const auto* h : hits) *out.add_services() = h->second;
  }
  // helper.DefaultSelector compares the owner's group/version and kind.
  objects::WorkloadKind kind;
  if (pod.controller_api_version == "v1" &&
      pod.controller_kind == "ReplicationController") {
    kind = objects::WorkloadKind::kReplicationController;
  } else if (pod.controller_api_version == "apps/v1" &&
             pod.controller_kind == "ReplicaSet") {
    kind = objects::WorkloadKind::kReplicaSet;
  } else if (pod.controller_api_version == "apps/v1" &&
             pod.controller_kind == "StatefulSet") {
    kind = objects::WorkloadKind::kStatefulSet;
  } else {
    return out;
  }
  auto by_kind = controllers_.find(static_cast<int>(kind));
  if (by_kind == controllers_.end()) return out;
  auto it = by_kind->second.find(
      absl::StrCat(pod.namespace_, "/", pod.controller_name));
  if (it == by_kind->second.end()) return out;
  out.set_controller_kind(pod.controller_kind);
  if (it->second.has_value()) *out.mutable_controller() = *it->second;
  return out;
}

bool ClusterIndex::MatchesAll(const pb::PodQuery& q, const Signature& s) const {
  return std::all_of(q.all_of().begin(), q.all_of().end(),
                     [&](const pb::PodMatcher& m) { return Matches(m, s); });
}

bool ClusterIndex::Matches(const pb::PodMatcher& m, const Signature& s) const {
  if (!m.has_selector()) return false;
  bool in_namespace = std::find(m.namespaces().begin(), m.namespaces().end(),
                                s.ns) != m.namespaces().end();
  if (!in_namespace && m.has_namespace_selector()) {
    in_namespace = model::LabelSelectorMatches(m.namespace_selector(),
                                               NamespaceLabels(s.ns));
  }
  return in_namespace && model::LabelSelectorMatches(m.selector(), s.labels);
}

ClusterIndex::Prepared ClusterIndex::Prepare(
    const pb::Pod& pod, const pb::PlanResponse& plan) const {
  Prepared out;
  out.cluster.set_node_count(static_cast<int32_t>(nodes_.size()));
  if (!plan.queries().empty() || !plan.existing_terms().empty()) {
    RefreshNodeTables(out);
  }
  for (const pb::PodQuery& q : plan.queries()) PrepareQuery(q, pod, out);
  PrepareTerms(plan, out);
  for (const std::string& image : pod.images()) {
    std::string name = model::NormalizedImageName(image);
    if (std::find(out.images.begin(), out.images.end(), name) ==
        out.images.end()) {
      out.images.push_back(std::move(name));
    }
  }
  return out;
}

std::vector<const ClusterIndex::Signature*> ClusterIndex::SignaturesFor(
    const pb::PodQuery& q) const {
  // Only signatures that can match the first matcher's namespaces are
  // looked at, unless a namespace selector widens them.
  std::vector<const Signature*> candidates;
  const bool any_ns_selector = std::any_of(
      q.all_of().begin(), q.all_of().end(),
      [](const pb::PodMatcher& m) { return m.has_namespace_selector(); });
  if (q.all_of().empty()) {
    // No matcher: no pod counts.
  } else if (any_ns_selector) {
    for (const auto& [_, sig] : signatures_) candidates.push_back(sig.get());
  } else {
    for (const std::string& ns : q.all_of(0).namespaces()) {
      auto it = by_namespace_.find(ns);
      if (it == by_namespace_.end()) continue;
      candidates.insert(candidates.end(), it->second.begin(), it->second.end());
    }
  }
  return candidates;
}

void ClusterIndex::RefreshNodeTables(Prepared& out) const {
  if (ids_version_ != node_version_) {
    int32_t id = 0;
    id_names_.clear();
    id_names_.reserve(nodes_.size());
    for (const auto& [name, n] : nodes_) {
      n.id = id++;
      id_names_.push_back(&name);
    }
    ids_version_ = node_version_;
    key_tables_.clear();
    eligibility_.clear();
  }
  out.node_version = node_version_;
}

std::shared_ptr<const ClusterIndex::KeyTable> ClusterIndex::DomainsOf(
    const std::string& key) const {
  if (auto it = key_tables_.find(key); it != key_tables_.end()) {
    return it->second;
  }
  auto t = std::make_shared<KeyTable>();
  t->domain.assign(nodes_.size(), -1);
  absl::flat_hash_map<absl::string_view, int32_t> seen;  // into nodes_
  for (const auto& [_, n] : nodes_) {
    const std::string* value = Label(n.node, key);
    if (value == nullptr) continue;
    auto [it, fresh] =
        seen.try_emplace(*value, static_cast<int32_t>(t->names.size()));
    if (fresh) {
      t->names.push_back(*value);
      t->members.emplace_back();
    }
    t->per_node = t->per_node && fresh;
    t->domain[n.id] = it->second;
    t->members[static_cast<size_t>(it->second)].push_back(n.id);
  }
  t->index.reserve(seen.size());
  for (const auto& [value, d] : seen) t->index.emplace(value, d);
  if (key_tables_.size() >= kMaxCached) key_tables_.clear();
  key_tables_.emplace(key, t);
  return t;
}

std::shared_ptr<const ClusterIndex::Eligibility> ClusterIndex::EligibilityFor(
    const pb::PodQuery& q, const std::string& key,
    const pb::Pod& node_side) const {
  if (auto it = eligibility_.find(key); it != eligibility_.end()) {
    return it->second;
  }
  ++eligibility_builds_;
  auto e = std::make_shared<Eligibility>();
  e->domains = DomainsOf(q.topology_key());
  e->domain.assign(nodes_.size(), -1);
  std::vector<bool> seen(e->domains->names.size());
  for (const auto& [_, n] : nodes_) {
    const int32_t d = e->domains->domain[n.id];
    if (d < 0 || !CountsPodsOn(q, node_side, n.node)) continue;
    e->domain[n.id] = d;
    if (!seen[d]) {
      seen[d] = true;
      ++e->distinct;
    }
  }
  if (eligibility_.size() >= kMaxCached) eligibility_.clear();
  eligibility_.emplace(key, e);
  return e;
}

const ClusterIndex::Tally& ClusterIndex::TallyFor(
    const pb::PodQuery& q, std::shared_ptr<const Eligibility> e,
    const std::string& eligibility_key) const {
  pb::PodQuery matchers;
  *matchers.mutable_all_of() = q.all_of();
  matchers.set_include_terminating(q.include_terminating());
  const std::string head = Deterministic(matchers);
  const std::string key = absl::StrCat(head.size(), ":", head, eligibility_key);
  if (auto it = tallies_.find(key); it != tallies_.end()) return *it->second;
  ++tally_builds_;
  if (tallies_.size() >= kMaxCached) DropTallies();
  auto t = std::make_unique<Tally>();
  t->include_terminating = q.include_terminating();
  t->matchers = std::move(matchers);
  t->by_domain.assign(e->domains->names.size(), 0);
  t->e = std::move(e);
  for (const Signature* sig : SignaturesFor(q)) {
    if (!MatchesAll(q, *sig)) {
      continue;
    }
    sig->tallies.push_back(t.get());
    for (const auto& [node, c] : sig->nodes) {
      const int64_t count = t->include_terminating ? c.all : c.live;
      auto n = nodes_.find(node);
      if (count == 0 || n == nodes_.end()) continue;  // no Node: not counted
      const int32_t d = t->e->domain[n->second.id];
      if (d < 0) continue;
      t->by_domain[static_cast<size_t>(d)] += count;
      t->total += count;
    }
  }
  return *tallies_.emplace(key, std::move(t)).first->second;
}

void ClusterIndex::TallyTerm(Term& t) const {
  if (t.table != nullptr) return;
  ++tally_builds_;
  t.table = DomainsOf(t.term.term().topology_key());
  t.by_domain = std::make_shared<DomainCounts>();
  t.total = 0;
  for (const auto& [node, count] : t.nodes) {
    auto n = nodes_.find(node);
    if (n == nodes_.end()) continue;
    const int32_t d = t.table->domain[n->second.id];
    if (d < 0) continue;
    (*t.by_domain)[d] += count;
    t.total += count;
  }
}

void ClusterIndex::CountInTallies(const Signature* sig,
                                  const std::vector<Term*>& terms,
                                  const std::string& node, int64_t all,
                                  int64_t live) const {
  const bool any_term = std::any_of(
      terms.begin(), terms.end(), [](Term* t) { return t->table != nullptr; });
  if ((sig == nullptr || sig->tallies.empty()) && !any_term) return;
  auto n = nodes_.find(node);
  if (n == nodes_.end()) return;  // no Node object: not counted
  const int32_t id = n->second.id;
  if (sig != nullptr) {
    for (Tally* t : sig->tallies) {
      const int32_t d = t->e->domain[id];
      if (d < 0) continue;
      const int64_t by = t->include_terminating ? all : live;
      t->by_domain[static_cast<size_t>(d)] += by;
      t->total += by;
    }
  }
  for (Term* t : terms) {
    if (t->table == nullptr) continue;
    const int32_t d = t->table->domain[id];
    if (d < 0) continue;
    // A cycle's Prepared holds the counts as they were.
    if (t->by_domain.use_count() > 1) {
      t->by_domain = std::make_shared<DomainCounts>(*t->by_domain);
    }
    if (((*t->by_domain)[d] += all) <= 0) t->by_domain->erase(d);
    t->total += all;
  }
}

void ClusterIndex::DropTallies() const {
  if (!tallies_.empty()) {
    for (const auto& [_, sig] : signatures_) sig->tallies.clear();
    tallies_.clear();
  }
  for (const auto& [_, t] : terms_) {
    t->table.reset();
    t->by_domain.reset();
  }
}

void ClusterIndex::PrepareQuery(const pb::PodQuery& q, const pb::Pod& pod,
                                Prepared& out) const {
  Prepared::Query& pq = out.queries.emplace_back();
  pq.key = q.topology_key();
  pb::QueryAnswer* answer = out.cluster.add_answers();
  if (pq.key.empty()) {
    answer->set_total(CountPerNode(q, pq.counts));
    return;
  }
  // Which nodes count, and their domains; the matching pods in each.
  const pb::Pod node_side = NodeSideOf(q, pod);
  const std::string key = EligibilityKey(q, node_side);
  std::shared_ptr<const Eligibility> e = EligibilityFor(q, key, node_side);
  pq.domains = e->domains;
  out.domains_per_node = out.domains_per_node && e->domains->per_node;
  const Tally& t = TallyFor(q, e, key);
  pq.by_domain = t.by_domain;
  answer->set_total(t.total);
  if (!q.want_domains()) return;
  // The counted domains are among the eligible ones, each with a count
  // above 0: the least is 0 unless every eligible domain has one.
  int64_t min = std::numeric_limits<int64_t>::max();
  size_t counted = 0;
  for (const int64_t count : pq.by_domain) {
    if (count == 0) continue;
    ++counted;
    min = std::min(min, count);
  }
  if (e->distinct == 0 || counted != e->distinct) min = 0;
  answer->set_domains(static_cast<int32_t>(e->distinct));
  answer->set_min_count(min);
}

int64_t ClusterIndex::CountPerNode(
    const pb::PodQuery& q,
    absl::flat_hash_map<std::string, int64_t>& counts) const {
  int64_t total = 0;
  for (const Signature* sig : SignaturesFor(q)) {
    if (!MatchesAll(q, *sig)) {
      continue;
    }
    for (const auto& [node, c] : sig->nodes) {
      const int64_t count = q.include_terminating() ? c.all : c.live;
      if (count == 0 || !nodes_.contains(node)) continue;  // no Node object
      counts[node] += count;
      total += count;
    }
  }
  return total;
}

void ClusterIndex::PrepareTerms(const pb::PlanResponse& plan,
                                Prepared& out) const {
  absl::flat_hash_set<int> kinds(plan.existing_terms().begin(),
                                 plan.existing_terms().end());
  if (kinds.empty()) return;
  // In a stable order (by identity), so requests are reproducible.
  std::vector<std::pair<const std::string*, Term*>> terms;
  for (const auto& [key, t] : terms_) {
    if (kinds.contains(t->term.kind())) terms.emplace_back(&key, t.get());
  }
  std::sort(terms.begin(), terms.end(),
            [](const auto& a, const auto& b) { return *a.first < *b.first; });
  for (const auto& [_, t] : terms) {
    TallyTerm(*t);
    Prepared::TermDomains& d = out.terms.emplace_back();
    d.index = out.cluster.existing_terms_size();
    d.id = t->id;
    d.key = t->term.term().topology_key();
    d.domains = t->table;
    d.by_domain = t->by_domain;
    out.domains_per_node = out.domains_per_node && d.domains->per_node;
    pb::ExistingTerm* e = out.cluster.add_existing_terms();
    *e = t->term;
    e->set_total(t->total);
  }
}

bool ClusterIndex::DomainPeers(const Prepared& prepared,
                               const std::vector<std::string>& changed,
                               std::vector<std::string>* out) const {
  if (prepared.domains_per_node) return true;
  if (prepared.node_version != node_version_ || ids_version_ != node_version_)
    return false;
  std::vector<const KeyTable*> shared;
  for (const Prepared::Query& q : prepared.queries)
    if (q.domains != nullptr && !q.domains->per_node)
      shared.push_back(q.domains.get());
  for (const Prepared::TermDomains& t : prepared.terms)
    if (t.domains != nullptr && !t.domains->per_node)
      shared.push_back(t.domains.get());
  // Each domain of a changed node once, each of its nodes once.
  std::vector<std::vector<bool>> hit(shared.size());
  std::vector<bool> added(id_names_.size());
  for (size_t k = 0; k < shared.size(); ++k) {
    hit[k].assign(shared[k]->names.size(), false);
  }
  for (const std::string& name : changed) {
    auto n = nodes_.find(name);
    if (n == nodes_.end()) continue;
    for (size_t k = 0; k < shared.size(); ++k) {
      const int32_t d = shared[k]->domain[n->second.id];
      if (d < 0 || hit[k][d]) continue;
      hit[k][d] = true;
      for (const int32_t id : shared[k]->members[static_cast<size_t>(d)]) {
        if (added[id]) continue;
        added[id] = true;
        out->push_back(*id_names_[id]);
      }
    }
  }
  return true;
}

int32_t ClusterIndex::DomainIndex(const Prepared& prepared,
                                  const KeyTable* table, const NodeData& n,
                                  const std::string& key) const {
  if (table == nullptr) return -1;
  // The same node version: the node has its id in `table`.
  if (prepared.node_version == node_version_) return table->domain[n.id];
  const std::string* v = Label(n.node, key);
  if (v == nullptr) return -1;
  auto it = table->index.find(*v);
  return it == table->index.end() ? -1 : it->second;
}

void ClusterIndex::NodeParts(const Prepared& prepared, absl::string_view node,
                             pb::Node* out) const {
  auto it = nodes_.find(node);
  const NodeData* n = it == nodes_.end() ? nullptr : &it->second;
  for (const Prepared::Query& q : prepared.queries) {
    int64_t count = 0;
    if (q.key.empty()) {
      auto c = q.counts.find(node);
      if (c != q.counts.end()) count = c->second;
    } else if (n != nullptr) {
      const int32_t d = DomainIndex(prepared, q.domains.get(), *n, q.key);
      if (d >= 0 && static_cast<size_t>(d) < q.by_domain.size()) {
        count = q.by_domain[static_cast<size_t>(d)];
      }
    }
    out->add_query_counts(count);
  }
  if (n == nullptr) return;
  for (const Prepared::TermDomains& t : prepared.terms) {
    const int32_t d = DomainIndex(prepared, t.domains.get(), *n, t.key);
    auto c = d < 0 ? t.by_domain->end() : t.by_domain->find(d);
    if (c == t.by_domain->end() || c->second <= 0) continue;
    const int64_t count = c->second;
    pb::TermCount* tc = out->add_term_counts();
    tc->set_term(t.index);
    tc->set_count(count);
  }
  for (const std::string& name : prepared.images) {
    auto img = n->images.find(name);
    if (img == n->images.end()) continue;
    pb::ImageState* s = out->add_images();
    s->set_name(name);
    s->set_size_bytes(img->second);
    auto nodes = image_nodes_.find(name);
    s->set_num_nodes(nodes == image_nodes_.end() ? 0 : nodes->second);
  }
}

void ClusterIndex::PodParts(const pb::Pod& pod, const pb::PlanResponse& plan,
                            const Prepared& prepared, const PodRef& ref,
                            pb::VictimPod* out) const {
  auto it = nodes_.find(ref.node);
  if (it == nodes_.end()) return;  // no Node object: not in the snapshot
  const pb::Node& node = it->second.node;
  if (const Signature* sig = ref.signature; sig != nullptr) {
    for (int i = 0; i < plan.queries_size(); ++i) {
      const pb::PodQuery& q = plan.queries(i);
      if (q.all_of().empty() || (ref.deleting && !q.include_terminating()) ||
          !MatchesAll(q, *sig) ||
          (!q.topology_key().empty() && !CountsPodsOn(q, pod, node))) {
        continue;
      }
      out->add_matched_queries(i);
    }
  }
  for (const Term* t : ref.terms) {
    for (const Prepared::TermDomains& d : prepared.terms) {
      if (d.id != t->id) continue;
      if (Label(node, d.key) != nullptr) out->add_terms(d.index);
      break;
    }
  }
}

}  // namespace kscore::cache
