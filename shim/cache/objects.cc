#include "shim/cache/objects.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "scorer/framework/pod_resources.h"
#include "scorer/framework/scalar_resources.h"
#include "shim/cache/quantity.h"

namespace kscore::cache {
namespace {

using nlohmann::json;

const json& At(const json& j, const char* key) {
  static const json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

std::string Str(const json& j, const char* key) {
  const json& v = At(j, key);
  return v.is_string() ? v.get<std::string>() : std::string();
}

void StringMap(const json& j,
               google::protobuf::Map<std::string, std::string>* out) {
  if (!j.is_object()) return;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.value().is_string())
      (*out)[it.key()] = it.value().get<std::string>();
  }
}

// A ResourceList ({"cpu": "100m", "memory": "1Gi", ...}) into pb::Resources.
absl::Status Resources(const json& list, const std::string& path,
                       pb::Resources* out) {
  if (!list.is_object()) return absl::OkStatus();
  for (auto it = list.begin(); it != list.end(); ++it) {
    if (!it.value().is_string()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ".", it.key(), ": not a quantity"));
    }
    const std::string& name = it.key();
    const std::string q = it.value().get<std::string>();
    absl::StatusOr<int64_t> v = ParseQuantity(q, name == "cpu" ? -3 : 0);
    if (!v.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ".", name, ": ", v.status().message()));
    }
    if (name == "cpu") {
      out->set_milli_cpu(*v);
    } else if (name == "memory") {
      out->set_memory(*v);
    } else if (name == "ephemeral-storage") {
      out->set_ephemeral_storage(*v);
    } else if (name == "pods") {
      out->set_pods(*v);
    } else if (absl::StrContains(name, "/") ||
               absl::StartsWith(name, "hugepages-")) {
      // Extended and hugepages resources; others (e.g. storage) are not
      // scheduled on.
      framework::MutableScalar(out, name)->set_value(*v);
    }
  }
  return absl::OkStatus();
}

void Requirement(const json& j, pb::NodeSelectorRequirement* out) {
  out->set_key(Str(j, "key"));
  out->set_operator_(Str(j, "operator"));
  const json& values = At(j, "values");
  if (values.is_array()) {
    for (const json& v : values) {
      if (v.is_string()) out->add_values(v.get<std::string>());
    }
  }
}

void Term(const json& j, pb::NodeSelectorTerm* out) {
  for (const json& e : At(j, "matchExpressions"))
    Requirement(e, out->add_match_expressions());
  for (const json& e : At(j, "matchFields"))
    Requirement(e, out->add_match_fields());
}

absl::Status Container(const json& c, const std::string& path,
                       pb::Container* out) {
  if (absl::Status s =
          Resources(At(At(c, "resources"), "requests"),
                    path + ".resources.requests", out->mutable_requests());
      !s.ok()) {
    return s;
  }
  out->set_restart_policy(Str(c, "restartPolicy"));
  for (const json& p : At(c, "ports")) {
    const json& hp = At(p, "hostPort");
    if (!hp.is_number_integer() || hp.get<int>() <= 0) continue;
    pb::ContainerPort* port = out->add_ports();
    port->set_host_port(hp.get<int>());
    std::string protocol = Str(p, "protocol");
    port->set_protocol(protocol.empty() ? "TCP" : protocol);
    port->set_host_ip(Str(p, "hostIP"));
  }
  return absl::OkStatus();
}

void AffinityTerms(const json& j, pb::PodAffinity* out) {
  for (const json& t : At(j, "requiredDuringSchedulingIgnoredDuringExecution"))
    out->add_required()->set_topology_key(Str(t, "topologyKey"));
  for (const json& w :
       At(j, "preferredDuringSchedulingIgnoredDuringExecution")) {
    pb::WeightedPodAffinityTerm* wt = out->add_preferred();
    if (const json& v = At(w, "weight"); v.is_number_integer())
      wt->set_weight(v.get<int32_t>());
    wt->mutable_term()->set_topology_key(
        Str(At(w, "podAffinityTerm"), "topologyKey"));
  }
}

// What the scorer reads of the pod's inter-pod affinity, spread constraints,
// claimed volumes and resource claims (its plugins, or its gates for the
// plugins it does not run, decide what they mean).
void Requirements(const json& spec, pb::Pod* pod) {
  const json& affinity = At(spec, "affinity");
  AffinityTerms(At(affinity, "podAffinity"), pod->mutable_pod_affinity());
  AffinityTerms(At(affinity, "podAntiAffinity"),
                pod->mutable_pod_anti_affinity());
  for (const json& c : At(spec, "topologySpreadConstraints")) {
    pb::TopologySpreadConstraint* t = pod->add_topology_spread_constraints();
    if (const json& v = At(c, "maxSkew"); v.is_number_integer())
      t->set_max_skew(v.get<int32_t>());
    t->set_topology_key(Str(c, "topologyKey"));
    t->set_when_unsatisfiable(Str(c, "whenUnsatisfiable"));
  }
  for (const json& v : At(spec, "volumes")) {
    const json& pvc = At(v, "persistentVolumeClaim");
    const bool ephemeral = !At(v, "ephemeral").is_null();
    if (pvc.is_null() && !ephemeral) continue;
    pb::VolumeClaim* c = pod->add_volume_claims();
    c->set_volume(Str(v, "name"));
    c->set_claim_name(Str(pvc, "claimName"));
    c->set_ephemeral(ephemeral);
  }
  for (const json& c : At(spec, "resourceClaims"))
    pod->add_resource_claims(Str(c, "name"));
}

}  // namespace

absl::Time ParseTime(const std::string& s) {
  absl::Time t;
  std::string err;
  if (!absl::ParseTime(absl::RFC3339_full, s, &t, &err))
    return absl::InfinitePast();
  return t;
}

absl::StatusOr<PodInfo> PodFromJson(const json& obj) {
  const json& meta = At(obj, "metadata");
  const json& spec = At(obj, "spec");
  PodInfo p;
  p.namespace_ = Str(meta, "namespace");
  p.name = Str(meta, "name");
  if (p.name.empty())
    return absl::InvalidArgumentError("pod without metadata.name");
  p.key = absl::StrCat(p.namespace_, "/", p.name);
  p.uid = Str(meta, "uid");
  p.resource_version = Str(meta, "resourceVersion");
  p.deleting = !At(meta, "deletionTimestamp").is_null();
  p.created = ParseTime(Str(meta, "creationTimestamp"));
  p.scheduler_name = Str(spec, "schedulerName");
  if (p.scheduler_name.empty()) p.scheduler_name = "default-scheduler";
  p.node_name = Str(spec, "nodeName");
  p.phase = Str(At(obj, "status"), "phase");
  const json& gates = At(spec, "schedulingGates");
  p.gated = gates.is_array() && !gates.empty();
  if (const json& prio = At(spec, "priority"); prio.is_number_integer()) {
    p.priority = prio.get<int32_t>();
  }
  for (const json& c : At(At(obj, "status"), "conditions")) {
    if (Str(c, "type") == "PodScheduled" && Str(c, "status") == "False") {
      p.unschedulable_message = Str(c, "message");
    }
  }

  pb::Pod& pod = p.pod;
  pod.set_namespace_(p.namespace_);
  pod.set_name(p.name);
  pod.set_uid(p.uid);
  pod.set_priority(p.priority);
  StringMap(At(meta, "labels"), pod.mutable_labels());
  StringMap(At(spec, "nodeSelector"), pod.mutable_node_selector());
  const json& node_affinity = At(At(spec, "affinity"), "nodeAffinity");
  if (!node_affinity.is_null()) {
    const json& required =
        At(node_affinity, "requiredDuringSchedulingIgnoredDuringExecution");
    if (!required.is_null()) {
      pod.mutable_node_affinity()->set_has_required(true);
      for (const json& t : At(required, "nodeSelectorTerms")) {
        Term(t, pod.mutable_node_affinity()->add_required());
      }
    }
    for (const json& t :
         At(node_affinity, "preferredDuringSchedulingIgnoredDuringExecution")) {
      pb::PreferredSchedulingTerm* pt =
          pod.mutable_node_affinity()->add_preferred();
      if (const json& w = At(t, "weight"); w.is_number_integer())
        pt->set_weight(w.get<int32_t>());
      Term(At(t, "preference"), pt->mutable_preference());
    }
  }
  for (const json& t : At(spec, "tolerations")) {
    pb::Toleration* tol = pod.add_tolerations();
    tol->set_key(Str(t, "key"));
    tol->set_operator_(Str(t, "operator"));
    tol->set_value(Str(t, "value"));
    tol->set_effect(Str(t, "effect"));
  }
  int i = 0;
  for (const json& c : At(spec, "containers")) {
    if (absl::Status s =
            Container(c, absl::StrCat("spec.containers[", i++, "]"),
                      pod.add_containers());
        !s.ok()) {
      return s;
    }
  }
  i = 0;
  for (const json& c : At(spec, "initContainers")) {
    if (absl::Status s =
            Container(c, absl::StrCat("spec.initContainers[", i++, "]"),
                      pod.add_init_containers());
        !s.ok()) {
      return s;
    }
  }
  Requirements(spec, &pod);
  if (absl::Status s = Resources(At(spec, "overhead"), "spec.overhead",
                                 pod.mutable_overhead());
      !s.ok()) {
    return s;
  }
  p.requests = framework::PodRequests(pod);
  p.non_zero = framework::PodNonZeroRequests(pod);
  // Host ports held on the node: regular containers and sidecars (init
  // containers that keep running).
  auto add_ports = [&p](const pb::Container& c) {
    for (const pb::ContainerPort& port : c.ports()) {
      pb::HostPort& hp = p.host_ports.emplace_back();
      hp.set_port(port.host_port());
      hp.set_protocol(port.protocol());
      hp.set_host_ip(port.host_ip());
    }
  };
  for (const pb::Container& c : pod.containers()) add_ports(c);
  for (const pb::Container& c : pod.init_containers()) {
    if (c.restart_policy() == "Always") add_ports(c);
  }
  return p;
}

absl::StatusOr<pb::Node> NodeFromJson(const json& obj) {
  const json& meta = At(obj, "metadata");
  const json& spec = At(obj, "spec");
  pb::Node n;
  n.set_name(Str(meta, "name"));
  if (n.name().empty())
    return absl::InvalidArgumentError("node without metadata.name");
  StringMap(At(meta, "labels"), n.mutable_labels());
  if (const json& u = At(spec, "unschedulable"); u.is_boolean())
    n.set_unschedulable(u.get<bool>());
  for (const json& t : At(spec, "taints")) {
    pb::Taint* taint = n.add_taints();
    taint->set_key(Str(t, "key"));
    taint->set_value(Str(t, "value"));
    taint->set_effect(Str(t, "effect"));
  }
  if (absl::Status s = Resources(At(At(obj, "status"), "allocatable"),
                                 "status.allocatable", n.mutable_allocatable());
      !s.ok()) {
    return s;
  }
  return n;
}

}  // namespace kscore::cache
