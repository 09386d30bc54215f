#include "model/wire_numbers.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "model/scalar_resources.h"

namespace kscore::model {
namespace {

constexpr int64_t kMaxPort = 65535;

// A field path, spelled out only when an error names it: each step points
// at its parent on the stack, so checking a node costs no allocation.
struct Path {
  Path(const Path* parent, absl::string_view field, int index = -1)
      : parent(parent), field(field), index(index) {}

  const Path* parent;
  absl::string_view field;
  int index;  // -1: not a list element

  std::string String() const {
    std::string out = parent != nullptr ? parent->String() : "";
    if (!field.empty()) {
      absl::StrAppend(&out, out.empty() ? "" : ".", field);
    }
    if (index >= 0) absl::StrAppend(&out, "[", index, "]");
    return out;
  }
};

absl::Status Invalid(const Path& p, absl::string_view why, int64_t got) {
  return absl::InvalidArgumentError(
      absl::StrCat(p.String(), ": ", why, ", got ", got));
}

// OK when v >= 0; otherwise the error naming `field` of `parent`.
absl::Status NotNegative(int64_t v, const Path& parent, absl::string_view field,
                         int index = -1) {
  if (v >= 0) return absl::OkStatus();
  return Invalid(Path{&parent, field, index}, "must not be negative", v);
}

absl::Status Port(int64_t v, const Path& parent, absl::string_view field) {
  if (v >= 0 && v <= kMaxPort) return absl::OkStatus();
  return Invalid(Path{&parent, field}, "must be a port in 0..65535", v);
}

// Every amount, then the extended resources' names (set, unique).
absl::Status CheckResources(const pb::Resources& r, const Path& p) {
  // One test for the common case: nothing negative anywhere.
  if ((r.milli_cpu() | r.memory() | r.ephemeral_storage() | r.pods()) < 0) {
    for (auto [field, v] :
         {std::pair<absl::string_view, int64_t>{"milli_cpu", r.milli_cpu()},
          {"memory", r.memory()},
          {"ephemeral_storage", r.ephemeral_storage()},
          {"pods", r.pods()}}) {
      KSCORE_RETURN_IF_ERROR(NotNegative(v, p, field));
    }
  }
  if (r.scalar().empty()) return absl::OkStatus();
  for (int i = 0; i < r.scalar_size(); ++i) {
    const int64_t v = r.scalar(i).value();
    if (v < 0) {
      const Path entry{&p, "scalar", i};
      return absl::InvalidArgumentError(absl::StrCat(
          Path{&entry, "value"}.String(), ": must not be negative, got ", v,
          " (\"", r.scalar(i).name(), "\")"));
    }
  }
  std::string why = CheckScalars(r);
  if (why.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(p.String(), ".", why));
}

absl::Status CheckContainers(
    const google::protobuf::RepeatedPtrField<pb::Container>& list,
    const Path& pod, absl::string_view field) {
  for (int i = 0; i < list.size(); ++i) {
    const pb::Container& c = list[i];
    const Path at{&pod, field, i};
    if (absl::Status s = CheckResources(c.requests(), Path{&at, "requests"});
        !s.ok()) {
      return s;
    }
    for (int j = 0; j < c.ports_size(); ++j) {
      if (absl::Status s =
              Port(c.ports(j).host_port(), Path{&at, "ports", j}, "host_port");
          !s.ok()) {
        return s;
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckWeights(const google::protobuf::RepeatedPtrField<
                              pb::WeightedPodAffinityTerm>& terms,
                          const Path& affinity) {
  for (int i = 0; i < terms.size(); ++i) {
    if (absl::Status s = NotNegative(terms[i].weight(),
                                     Path{&affinity, "preferred", i}, "weight");
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace

// Pod.volumes: sizes in bytes (the API server refuses negative ones).
absl::Status CheckVolumeNumbers(const pb::PodVolumes& v, const Path& pod) {
  const Path p{&pod, "volumes"};
  for (int i = 0; i < v.claims_size(); ++i) {
    if (absl::Status s = NotNegative(v.claims(i).storage_request(),
                                     Path{&p, "claims", i}, "storage_request");
        !s.ok()) {
      return s;
    }
  }
  for (int i = 0; i < v.volumes_size(); ++i) {
    if (absl::Status s = NotNegative(v.volumes(i).capacity(),
                                     Path{&p, "volumes", i}, "capacity");
        !s.ok()) {
      return s;
    }
  }
  for (int i = 0; i < v.capacities_size(); ++i) {
    const Path at{&p, "capacities", i};
    for (const auto& [field, value] :
         {std::pair<absl::string_view, int64_t>{"limit",
                                                v.capacities(i).limit()},
          {"capacity", v.capacities(i).capacity()}}) {
      if (absl::Status s = NotNegative(value, at, field); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

absl::Status CheckPodNumbers(const pb::Pod& pod, absl::string_view path) {
  const Path p{nullptr, path};
  if (absl::Status s = CheckContainers(pod.containers(), p, "containers");
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          CheckContainers(pod.init_containers(), p, "init_containers");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckResources(pod.pod_level_requests(),
                                      Path{&p, "pod_level_requests"});
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckResources(pod.overhead(), Path{&p, "overhead"});
      !s.ok()) {
    return s;
  }
  const Path node_affinity{&p, "node_affinity"};
  for (int i = 0; i < pod.node_affinity().preferred_size(); ++i) {
    if (absl::Status s =
            NotNegative(pod.node_affinity().preferred(i).weight(),
                        Path{&node_affinity, "preferred", i}, "weight");
        !s.ok()) {
      return s;
    }
  }
  if (absl::Status s = CheckWeights(pod.pod_affinity().preferred(),
                                    Path{&p, "pod_affinity"});
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckWeights(pod.pod_anti_affinity().preferred(),
                                    Path{&p, "pod_anti_affinity"});
      !s.ok()) {
    return s;
  }
  for (int i = 0; i < pod.topology_spread_constraints_size(); ++i) {
    const pb::TopologySpreadConstraint& c = pod.topology_spread_constraints(i);
    const Path at{&p, "topology_spread_constraints", i};
    // As the API server validates them: maxSkew - 1 is added to scores.
    if (c.max_skew() < 1) {
      return Invalid(Path{&at, "max_skew"}, "must be at least 1", c.max_skew());
    }
    if (c.has_min_domains() && c.min_domains() < 1) {
      return Invalid(Path{&at, "min_domains"}, "must be at least 1 when set",
                     c.min_domains());
    }
  }
  if (pod.image_volumes() < 0 || pod.image_volumes() > pod.images_size()) {
    return Invalid(Path{&p, "image_volumes"},
                   absl::StrCat("must be in 0..", pod.images_size(),
                                " (the number of images)"),
                   pod.image_volumes());
  }
  return CheckVolumeNumbers(pod.volumes(), p);
}

absl::Status CheckNodeNumbers(const pb::Node& node, absl::string_view field,
                              int index) {
  const Path p{nullptr, field, index};
  for (auto [name, r] : {std::pair<absl::string_view, const pb::Resources*>{
                             "allocatable", &node.allocatable()},
                         {"requested", &node.requested()},
                         {"non_zero_requested", &node.non_zero_requested()}}) {
    KSCORE_RETURN_IF_ERROR(CheckResources(*r, Path{&p, name}));
  }
  KSCORE_RETURN_IF_ERROR(NotNegative(node.pod_count(), p, "pod_count"));
  for (int i = 0; i < node.used_ports_size(); ++i) {
    if (absl::Status s =
            Port(node.used_ports(i).port(), Path{&p, "used_ports", i}, "port");
        !s.ok()) {
      return s;
    }
  }
  for (int i = 0; i < node.label_counts_size(); ++i) {
    if (absl::Status s = NotNegative(node.label_counts(i).count(),
                                     Path{&p, "label_counts", i}, "count");
        !s.ok()) {
      return s;
    }
  }
  for (int i = 0; i < node.query_counts_size(); ++i) {
    if (absl::Status s =
            NotNegative(node.query_counts(i), p, "query_counts", i);
        !s.ok()) {
      return s;
    }
  }
  for (int i = 0; i < node.term_counts_size(); ++i) {
    if (absl::Status s = NotNegative(node.term_counts(i).count(),
                                     Path{&p, "term_counts", i}, "count");
        !s.ok()) {
      return s;
    }
  }
  for (int i = 0; i < node.images_size(); ++i) {
    const pb::ImageState& image = node.images(i);
    const Path at{&p, "images", i};
    if (absl::Status s = NotNegative(image.size_bytes(), at, "size_bytes");
        !s.ok()) {
      return s;
    }
    if (absl::Status s = NotNegative(image.num_nodes(), at, "num_nodes");
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::Status CheckVictimNumbers(const pb::VictimPod& pod,
                                absl::string_view field) {
  const Path p{nullptr, field};
  for (auto [name, r] : {std::pair<absl::string_view, const pb::Resources*>{
                             "requests", &pod.requests()},
                         {"non_zero_requests", &pod.non_zero_requests()}}) {
    KSCORE_RETURN_IF_ERROR(CheckResources(*r, Path{&p, name}));
  }
  for (int i = 0; i < pod.ports_size(); ++i) {
    if (absl::Status s =
            Port(pod.ports(i).port(), Path{&p, "ports", i}, "port");
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::Status CheckClusterNumbers(const pb::ClusterData& cluster) {
  const Path p{nullptr, "cluster"};
  for (int i = 0; i < cluster.answers_size(); ++i) {
    const pb::QueryAnswer& a = cluster.answers(i);
    const Path at{&p, "answers", i};
    for (auto [field, v] :
         {std::pair<absl::string_view, int64_t>{"total", a.total()},
          {"domains", a.domains()},
          {"min_count", a.min_count()}}) {
      KSCORE_RETURN_IF_ERROR(NotNegative(v, at, field));
    }
  }
  for (int i = 0; i < cluster.existing_terms_size(); ++i) {
    const pb::ExistingTerm& e = cluster.existing_terms(i);
    const Path at{&p, "existing_terms", i};
    KSCORE_RETURN_IF_ERROR(NotNegative(e.weight(), at, "weight"));
    KSCORE_RETURN_IF_ERROR(NotNegative(e.total(), at, "total"));
  }
  return NotNegative(cluster.node_count(), p, "node_count");
}

absl::Status RawScoreOutOfRange(int64_t score, ScoreRange range,
                                absl::string_view plugin,
                                absl::string_view path) {
  if (score < 0 && range.min == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": must not be negative, got ", score,
                     " (a raw score of ", plugin, ")"));
  }
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": must be in [", range.min, ", ", range.max,
                   "], got ", score, " (a raw score of ", plugin, ")"));
}

}  // namespace kscore::model
