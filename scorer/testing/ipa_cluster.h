#ifndef KSCORE_SCORER_TESTING_IPA_CLUSTER_H_
#define KSCORE_SCORER_TESTING_IPA_CLUSTER_H_

// A small cluster for tests of plugins that plan (InterPodAffinity): nodes,
// pods placed on them and namespaces, answering a pod's plan
// (pb::PlanResponse) by brute force, the way the contract
// (proto/kscore/scorer/v1/scorer.proto) says the shim answers it. Built for
// clarity, not speed: every query walks every pod.

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "kscore/scorer/v1/scorer.pb.h"
#include "model/selectors.h"

namespace kscore::testing {

namespace pb = ::kscore::scorer::v1;

// A label selector requirement: LabelReq("app", "In", {"web"}). Not Req:
// wrappers.h's Req has the same parameters and returns a
// NodeSelectorRequirement, and two inline functions differing only in their
// return type are one symbol to the linker (UBSan caught a test calling the
// wrong one).
inline pb::LabelSelectorRequirement LabelReq(
    std::string key, std::string op, std::vector<std::string> values = {}) {
  pb::LabelSelectorRequirement r;
  r.set_key(std::move(key));
  r.set_operator_(std::move(op));
  for (std::string& v : values) r.add_values(std::move(v));
  return r;
}

inline pb::LabelSelector Selector(
    std::vector<pb::LabelSelectorRequirement> exprs,
    std::map<std::string, std::string> labels = {}) {
  pb::LabelSelector s;
  for (pb::LabelSelectorRequirement& r : exprs) {
    *s.add_match_expressions() = std::move(r);
  }
  for (auto& [k, v] : labels) (*s.mutable_match_labels())[k] = v;
  return s;
}

// A term selecting pods by `selector` in the owner's namespace.
inline pb::PodAffinityTerm Term(std::string topology_key,
                                pb::LabelSelector selector) {
  pb::PodAffinityTerm t;
  t.set_topology_key(std::move(topology_key));
  *t.mutable_label_selector() = std::move(selector);
  return t;
}

// st.MakePod()'s PodAffinityIn / PodAffinityExists terms.
inline pb::PodAffinityTerm TermIn(std::string label, std::string topology_key,
                                  std::vector<std::string> values) {
  return Term(std::move(topology_key),
              Selector({LabelReq(std::move(label), "In", std::move(values))}));
}
inline pb::PodAffinityTerm TermExists(std::string label,
                                      std::string topology_key) {
  return Term(std::move(topology_key),
              Selector({LabelReq(std::move(label), "Exists")}));
}

// A pod with (anti-)affinity terms, placed or incoming.
class AffinityPod {
 public:
  explicit AffinityPod(std::string ns = "default") {
    pod_.set_namespace_(std::move(ns));
    pod_.set_name("pod");
  }
  AffinityPod& Name(std::string n) {
    pod_.set_name(std::move(n));
    return *this;
  }
  AffinityPod& Label(const std::string& k, const std::string& v) {
    (*pod_.mutable_labels())[k] = v;
    return *this;
  }
  AffinityPod& Labels(const std::map<std::string, std::string>& labels) {
    for (const auto& [k, v] : labels) Label(k, v);
    return *this;
  }
  AffinityPod& Affinity(pb::PodAffinityTerm t) {
    *pod_.mutable_pod_affinity()->add_required() = std::move(t);
    return *this;
  }
  AffinityPod& Anti(pb::PodAffinityTerm t) {
    *pod_.mutable_pod_anti_affinity()->add_required() = std::move(t);
    return *this;
  }
  AffinityPod& Preferred(int32_t weight, pb::PodAffinityTerm t) {
    pb::WeightedPodAffinityTerm* w =
        pod_.mutable_pod_affinity()->add_preferred();
    w->set_weight(weight);
    *w->mutable_term() = std::move(t);
    return *this;
  }
  AffinityPod& PreferredAnti(int32_t weight, pb::PodAffinityTerm t) {
    pb::WeightedPodAffinityTerm* w =
        pod_.mutable_pod_anti_affinity()->add_preferred();
    w->set_weight(weight);
    *w->mutable_term() = std::move(t);
    return *this;
  }
  pb::Pod Obj() const { return pod_; }

 private:
  pb::Pod pod_;
};

class IpaCluster {
 public:
  IpaCluster& Node(std::string name,
                   std::map<std::string, std::string> labels = {}) {
    pb::Node& n = nodes_.emplace_back();
    n.set_name(std::move(name));
    for (auto& [k, v] : labels) (*n.mutable_labels())[k] = v;
    return *this;
  }
  IpaCluster& Namespace(const std::string& name,
                        std::map<std::string, std::string> labels) {
    model::LabelMap& m = namespaces_[name];
    for (auto& [k, v] : labels) m[k] = v;
    return *this;
  }
  // A pod bound (or assumed) to `node`; `deleting` marks one being deleted.
  IpaCluster& Place(pb::Pod pod, std::string node, bool deleting = false) {
    pods_.push_back(Placed{std::move(pod), std::move(node), deleting});
    return *this;
  }

  // The incoming pod as the shim sends it: with its namespace's labels.
  pb::Pod Incoming(pb::Pod pod) const {
    *pod.mutable_namespace_labels() = NamespaceLabels(pod.namespace_());
    return pod;
  }

  // The answers to `plan` for `pod`: the cluster data, and the nodes with
  // their query_counts and term_counts (labels only when the plan asks for
  // them).
  std::pair<pb::ClusterData, std::vector<pb::Node>> Answer(
      const pb::Pod& /*pod*/, const pb::PlanResponse& plan) const {
    pb::ClusterData data;
    data.set_node_count(static_cast<int32_t>(nodes_.size()));
    std::vector<pb::Node> out;
    for (const pb::Node& n : nodes_) {
      pb::Node& o = out.emplace_back();
      o.set_name(n.name());
      if (plan.node_labels()) *o.mutable_labels() = n.labels();
    }
    for (const pb::PodQuery& q : plan.queries()) {
      // Counts by domain (or by node when the key is empty).
      std::map<std::string, int64_t> counts;
      int64_t total = 0;
      for (const Placed& p : pods_) {
        if (p.deleting && !q.include_terminating()) continue;
        if (q.all_of().empty()) continue;
        if (!std::all_of(
                q.all_of().begin(), q.all_of().end(),
                [&](const pb::PodMatcher& m) { return Matches(m, p.pod); })) {
          continue;
        }
        const pb::Node* n = FindNode(p.node);
        if (n == nullptr) continue;
        if (q.topology_key().empty()) {
          ++counts[n->name()];
        } else {
          auto v = n->labels().find(q.topology_key());
          if (v == n->labels().end()) continue;
          ++counts[v->second];
        }
        ++total;
      }
      data.add_answers()->set_total(total);
      for (size_t i = 0; i < nodes_.size(); ++i) {
        std::string domain = nodes_[i].name();
        if (!q.topology_key().empty()) {
          auto v = nodes_[i].labels().find(q.topology_key());
          domain = v == nodes_[i].labels().end() ? "" : v->second;
          if (v == nodes_[i].labels().end()) {
            out[i].add_query_counts(0);
            continue;
          }
        }
        auto c = counts.find(domain);
        out[i].add_query_counts(c == counts.end() ? 0 : c->second);
      }
    }
    AnswerTerms(plan, data, out);
    return {std::move(data), std::move(out)};
  }

 private:
  struct Placed {
    pb::Pod pod;
    std::string node;
    bool deleting = false;
  };

  const pb::Node* FindNode(const std::string& name) const {
    for (const pb::Node& n : nodes_) {
      if (n.name() == name) return &n;
    }
    return nullptr;
  }

  model::LabelMap NamespaceLabels(const std::string& ns) const {
    auto it = namespaces_.find(ns);
    return it == namespaces_.end() ? model::LabelMap() : it->second;
  }

  bool Matches(const pb::PodMatcher& m, const pb::Pod& pod) const {
    if (!m.has_selector()) return false;
    bool in_ns = std::find(m.namespaces().begin(), m.namespaces().end(),
                           pod.namespace_()) != m.namespaces().end();
    if (!in_ns && m.has_namespace_selector()) {
      in_ns = model::LabelSelectorMatches(m.namespace_selector(),
                                          NamespaceLabels(pod.namespace_()));
    }
    return in_ns && model::LabelSelectorMatches(m.selector(), pod.labels());
  }

  static std::string Identity(const pb::ExistingTerm& e) {
    std::string out;
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    e.SerializeToCodedStream(&coded);
    coded.Trim();
    return out;
  }

  // The distinct terms of the kinds the plan asks for, each with the pods
  // carrying it per occurrence, on nodes with its topology key.
  void AnswerTerms(const pb::PlanResponse& plan, pb::ClusterData& data,
                   std::vector<pb::Node>& out) const {
    std::set<int> kinds(plan.existing_terms().begin(),
                        plan.existing_terms().end());
    std::map<std::string, int> index;  // identity -> existing_terms index
    std::vector<std::map<std::string, int64_t>> by_domain;
    auto add = [&](const Placed& p, pb::TermKind kind,
                   const pb::PodAffinityTerm& t, int32_t weight) {
      if (!kinds.contains(kind)) return;
      pb::ExistingTerm e;
      e.set_kind(kind);
      *e.mutable_term() = t;
      e.set_weight(weight);
      e.set_namespace_(p.pod.namespace_());
      auto [it, fresh] =
          index.try_emplace(Identity(e), data.existing_terms_size());
      if (fresh) {
        *data.add_existing_terms() = e;
        by_domain.emplace_back();
      }
      const pb::Node* n = FindNode(p.node);
      if (n == nullptr) return;
      auto v = n->labels().find(t.topology_key());
      if (v == n->labels().end()) return;
      ++by_domain[it->second][v->second];
      pb::ExistingTerm* stored = data.mutable_existing_terms(it->second);
      stored->set_total(stored->total() + 1);
    };
    for (const Placed& p : pods_) {
      for (const auto& t : p.pod.pod_affinity().required()) {
        add(p, pb::TERM_KIND_REQUIRED_AFFINITY, t, 0);
      }
      for (const auto& t : p.pod.pod_anti_affinity().required()) {
        add(p, pb::TERM_KIND_REQUIRED_ANTI_AFFINITY, t, 0);
      }
      for (const auto& t : p.pod.pod_affinity().preferred()) {
        add(p, pb::TERM_KIND_PREFERRED_AFFINITY, t.term(), t.weight());
      }
      for (const auto& t : p.pod.pod_anti_affinity().preferred()) {
        add(p, pb::TERM_KIND_PREFERRED_ANTI_AFFINITY, t.term(), t.weight());
      }
    }
    for (size_t i = 0; i < nodes_.size(); ++i) {
      for (int t = 0; t < data.existing_terms_size(); ++t) {
        const std::string& key = data.existing_terms(t).term().topology_key();
        auto v = nodes_[i].labels().find(key);
        if (v == nodes_[i].labels().end()) continue;
        auto c = by_domain[t].find(v->second);
        if (c == by_domain[t].end() || c->second <= 0) continue;
        pb::TermCount* tc = out[i].add_term_counts();
        tc->set_term(t);
        tc->set_count(c->second);
      }
    }
  }

  std::vector<pb::Node> nodes_;
  std::vector<Placed> pods_;
  std::map<std::string, model::LabelMap> namespaces_;
};

}  // namespace kscore::testing

#endif  // KSCORE_SCORER_TESTING_IPA_CLUSTER_H_
