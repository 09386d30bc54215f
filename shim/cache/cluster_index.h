#ifndef KSCORE_SHIM_CACHE_CLUSTER_INDEX_H_
#define KSCORE_SHIM_CACHE_CLUSTER_INDEX_H_

// The cluster-wide facts a pod's plan (pb::PlanResponse) asks about, kept
// incrementally so a cycle answers its queries in O(distinct label sets +
// matching pods + distinct terms), never by walking every pod:
// - pods by (namespace, labels) signature, with per-node counts;
// - the distinct (anti-)affinity terms of pods on nodes, with per-node
//   counts;
// - node labels, taints and images; namespace labels; the selectors of the
//   Services and controllers that kube-scheduler's default spreading reads.
// The index only counts and matches selectors, with the framework's
// selector semantics (model/selectors.h), as the API server
// answers a list with a label selector; what the counts mean is the
// plugins' rule, in the scorer.
//
// A query's node side (which nodes count and their domains) and a topology
// key's domains are kept between cycles too, per node version: they are
// worked out again only after a node came, went, or changed its labels or
// taints. So are the counts by domain of the queries with a topology key
// and of the existing terms (tallies): a pod that comes or goes adds to or
// subtracts from them, so a cycle copies them instead of walking every
// node that holds a matching pod.
//
// Not thread-safe: the Cache owns it and calls it under its lock (Prepare
// too, which fills those caches).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "kscore/scorer/v1/scorer.pb.h"
#include "model/selectors.h"
#include "shim/objects/objects.h"

namespace kscore::cache {

namespace pb = ::kscore::scorer::v1;

class ClusterIndex {
 private:
  struct Signature;
  struct Term;
  struct KeyTable;
  struct Eligibility;
  struct Tally;

 public:
  // Pods by domain (an index into a KeyTable's names), only domains with
  // some: a term over the hostname has few of the many.
  using DomainCounts = absl::flat_hash_map<int32_t, int64_t>;

  // What a pod added, so removing it subtracts exactly that.
  struct PodRef {
    Signature* signature = nullptr;  // null for terminated pods
    std::vector<Term*> terms;
    std::string node;
    bool deleting = false;
  };

  // The answers to one pod's plan: computed once per cycle (Prepare), then
  // read for every candidate node (NodeParts). Holds values, and shared
  // immutable tables, not pointers into the index, so it stays valid while
  // the cache changes; NodeParts reads the tables only while no node has
  // changed since (else the node's labels, as before).
  struct Prepared {
    pb::ClusterData cluster;
    // The node version the tables below were read at (0: none read).
    uint64_t node_version = 0;
    struct Query {
      std::string key;  // empty: per node
      // Without a key, by node name; with one, by index into `domains`'
      // names (the matching pods in each domain).
      absl::flat_hash_map<std::string, int64_t> counts;
      std::vector<int64_t> by_domain;
      std::shared_ptr<const KeyTable> domains;  // of `key`
    };
    std::vector<Query> queries;
    struct TermDomains {
      int32_t index = 0;
      std::string id;  // the term's identity in the index
      std::string key;
      // Shared with the index, which copies it before it changes.
      std::shared_ptr<const DomainCounts> by_domain;
      std::shared_ptr<const KeyTable> domains;  // of `key`
    };
    std::vector<TermDomains> terms;
    std::vector<std::string> images;  // the pod's, normalised, distinct
    // Every query's and term's topology key has a value of its own on each
    // node that has it (as kubernetes.io/hostname has): a pod on a node
    // changes that node's parts only.
    bool domains_per_node = true;
    bool empty() const {
      return queries.empty() && terms.empty() && images.empty();
    }
  };

  ClusterIndex() = default;
  ClusterIndex(const ClusterIndex&) = delete;
  ClusterIndex& operator=(const ClusterIndex&) = delete;
  ~ClusterIndex();

  void UpsertNode(const pb::Node& node, std::vector<objects::NodeImage> images);
  void RemoveNode(const std::string& name);
  size_t node_count() const { return nodes_.size(); }

  // A pod on `node` (bound or assumed). Terminated pods are not counted.
  PodRef AddPod(const objects::PodInfo& pod, const std::string& node);
  void RemovePod(const PodRef& ref);

  // True when the namespace is new or its labels changed.
  bool UpsertNamespace(const std::string& name, const model::LabelMap& l);
  void RemoveNamespace(const std::string& name);
  // A Service's selector (match_labels; has_selector false for a Service
  // without one, which selects no pod) or a controller's.
  void UpsertWorkload(objects::WorkloadKind kind, const std::string& ns,
                      const std::string& name, bool has_selector,
                      const pb::LabelSelector& selector);
  void RemoveWorkload(objects::WorkloadKind kind, const std::string& ns,
                      const std::string& name);

  // The labels of a namespace (empty when unknown).
  const model::LabelMap& NamespaceLabels(const std::string& ns) const;
  // helper.DefaultSelector's inputs for the pod: the selectors of the
  // Services of its namespace that select it, and its controller's.
  pb::WorkloadSelectors WorkloadSelectorsFor(const objects::PodInfo& pod) const;

  // Answers the plan for `pod` (the message as sent, with its namespace
  // labels when the profile asks for them) and prepares the per-node parts.
  Prepared Prepare(const pb::Pod& pod, const pb::PlanResponse& plan) const;
  // The per-node parts of the answers for one candidate: query_counts,
  // term_counts and images, into `out` (which has nothing else set).
  void NodeParts(const Prepared& prepared, absl::string_view node,
                 pb::Node* out) const;
  // The nodes whose parts a pod on one of `changed` changes besides its
  // own: those sharing its value of a topology key that the prepared
  // queries and terms read and that two nodes share a value of. Appended
  // to `out`; false when `prepared` is of an older node version (then its
  // domains may no longer be the nodes').
  bool DomainPeers(const Prepared& prepared,
                   const std::vector<std::string>& changed,
                   std::vector<std::string>* out) const;
  // What one pod on a node adds to those answers (PreemptRequest's
  // VictimPod): the plan's queries whose Node.query_counts on its node
  // count it (matched_queries), and the prepared existing terms it carries
  // there, one entry per occurrence as Node.term_counts counts them
  // (terms). `pod` and `plan` are the ones `prepared` was made for.
  void PodParts(const pb::Pod& pod, const pb::PlanResponse& plan,
                const Prepared& prepared, const PodRef& ref,
                pb::VictimPod* out) const;

  // How many times a query's node side was worked out over every node (a
  // miss of its cache), for tests.
  int64_t eligibility_builds() const { return eligibility_builds_; }
  // How many times a keyed query's or a term's counts by domain were
  // worked out over the nodes holding its pods (a miss of its tally).
  int64_t tally_builds() const { return tally_builds_; }

 private:
  struct NodeData {
    pb::Node node;  // name, labels, taints: what node filters read
    absl::flat_hash_map<std::string, int64_t> images;  // name -> size
    // Its place in the tables of node version ids_version_ (Prepare's).
    mutable int32_t id = -1;
  };
  struct Counts {
    int64_t all = 0;
    int64_t live = 0;  // not being deleted
  };
  // A keyed query's matching pods by domain of its eligible nodes, at the
  // current node version.
  struct Tally {
    pb::PodQuery matchers;  // the query's all_of only
    bool include_terminating = false;
    std::shared_ptr<const Eligibility> e;
    std::vector<int64_t> by_domain;  // by index into e->domains' names
    int64_t total = 0;
  };
  struct Signature {
    std::string ns;
    model::LabelMap labels;
    absl::flat_hash_map<std::string, Counts> nodes;
    int64_t pods = 0;
    mutable std::vector<Tally*> tallies;  // the kept query tallies it counts in
  };
  struct Term {
    std::string id;         // its key in terms_
    pb::ExistingTerm term;  // without total
    absl::flat_hash_map<std::string, int64_t> nodes;
    int64_t pods = 0;
    // Its pods by domain of its topology key, at the current node version
    // (no table: not kept); shared with Prepared, so copied before a change
    // while shared.
    std::shared_ptr<const KeyTable> table;
    std::shared_ptr<DomainCounts> by_domain;
    int64_t total = 0;
  };

  bool Matches(const pb::PodMatcher& m, const Signature& s) const;
  // Every matcher of the query's all_of matches the signature.
  bool MatchesAll(const pb::PodQuery& q, const Signature& s) const;
  // Prepare's parts: the signatures a pod query may match; a pod query's
  // counts (by node or domain) and answer; the existing terms of the kinds
  // the plan asks for, with their counts by domain.
  std::vector<const Signature*> SignaturesFor(const pb::PodQuery& q) const;
  void PrepareQuery(const pb::PodQuery& q, const pb::Pod& pod,
                    Prepared& out) const;
  // A query without a topology key: its matching pods by node; the total.
  int64_t CountPerNode(const pb::PodQuery& q,
                       absl::flat_hash_map<std::string, int64_t>& counts) const;
  void PrepareTerms(const pb::PlanResponse& plan, Prepared& out) const;
  // The node-side caches, current with node_version_ (numbering the nodes
  // anew after a change); a topology key's domains; a query's eligible
  // nodes for `pod`.
  void RefreshNodeTables(Prepared& out) const;
  std::shared_ptr<const KeyTable> DomainsOf(const std::string& key) const;
  std::shared_ptr<const Eligibility> EligibilityFor(
      const pb::PodQuery& q, const std::string& key,
      const pb::Pod& node_side) const;
  // A keyed query's tally: kept, or worked out and kept.
  const Tally& TallyFor(const pb::PodQuery& q,
                        std::shared_ptr<const Eligibility> e,
                        const std::string& eligibility_key) const;
  void TallyTerm(Term& t) const;
  // Adds `all` (and `live`, of pods not being deleted) pods of `sig` and
  // `terms` on `node` to the tallies that count them.
  void CountInTallies(const Signature* sig, const std::vector<Term*>& terms,
                      const std::string& node, int64_t all, int64_t live) const;
  // Drops every tally: node ids, domains or namespace labels changed.
  void DropTallies() const;
  // The domain of node `n` as an index into `table`'s names (-1 for none):
  // from `table` when `prepared` is of the current node version, else from
  // its labels.
  int32_t DomainIndex(const Prepared& prepared, const KeyTable* table,
                      const NodeData& n, const std::string& key) const;

  absl::flat_hash_map<std::string, NodeData> nodes_;
  // Bumped when a node comes or goes or its labels or taints change: what
  // the node-side caches read.
  uint64_t node_version_ = 1;
  mutable uint64_t ids_version_ = 0;  // of the NodeData ids
  // By id: the node's name (its key in nodes_, which no node has come to
  // or gone from while ids_version_ is current).
  mutable std::vector<const std::string*> id_names_;
  mutable absl::flat_hash_map<std::string, std::shared_ptr<const KeyTable>>
      key_tables_;
  mutable absl::flat_hash_map<std::string, std::shared_ptr<const Eligibility>>
      eligibility_;
  mutable int64_t eligibility_builds_ = 0;
  // Keyed query tallies by query and node side (Signature.tallies point
  // here; Term keeps its own).
  mutable absl::flat_hash_map<std::string, std::unique_ptr<Tally>> tallies_;
  mutable int64_t tally_builds_ = 0;
  // Nodes that have an image by that name.
  absl::flat_hash_map<std::string, int32_t> image_nodes_;
  absl::flat_hash_map<std::string, std::unique_ptr<Signature>> signatures_;
  absl::flat_hash_map<std::string, absl::flat_hash_set<Signature*>>
      by_namespace_;
  absl::flat_hash_map<std::string, std::unique_ptr<Term>> terms_;
  absl::flat_hash_map<std::string, model::LabelMap> namespaces_;
  // Services with a selector: namespace -> name -> selector.
  absl::flat_hash_map<std::string,
                      absl::flat_hash_map<std::string, pb::LabelSelector>>
      services_;
  // Controllers: kind -> "namespace/name" -> selector (unset when it has
  // none).
  absl::flat_hash_map<
      int, absl::flat_hash_map<std::string, std::optional<pb::LabelSelector>>>
      controllers_;
};

}  // namespace kscore::cache

#endif  // KSCORE_SHIM_CACHE_CLUSTER_INDEX_H_
