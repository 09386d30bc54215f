#include "shim/objects/object_fields.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "model/pod_resources.h"
#include "model/scalar_resources.h"
#include "model/wire_numbers.h"
#include "shim/objects/quantity.h"

namespace kscore::objects::fields {
namespace {

// Host ports held on the node: regular containers and sidecars (init
// containers that keep running).
void HostPorts(PodInfo* p) {
  auto add_ports = [p](const pb::Container& c) {
    for (const pb::ContainerPort& port : c.ports()) {
      pb::HostPort& hp = p->host_ports.emplace_back();
      hp.set_port(port.host_port());
      hp.set_protocol(port.protocol());
      hp.set_host_ip(port.host_ip());
    }
  };
  for (const pb::Container& c : p->pod.containers()) add_ports(c);
  for (const pb::Container& c : p->pod.init_containers()) {
    if (c.restart_policy() == "Always") add_ports(c);
  }
}

// Each spec container gets the status of its name (the first one found, as
// kube-scheduler's findContainerStatus).
void MatchContainerStatuses(PodInfo* p) {
  auto find = [p](size_t i) {
    model::PodResourceStatus::Container found;
    if (i >= p->container_names.size()) return found;
    for (const PodInfo::ContainerStatus& s : p->container_statuses) {
      if (s.name == p->container_names[i]) return s.resources;
    }
    return found;
  };
  const size_t containers = static_cast<size_t>(p->pod.containers_size());
  const size_t init = static_cast<size_t>(p->pod.init_containers_size());
  model::PodResourceStatus& status = p->resource_status;
  status.containers.clear();
  status.init_containers.clear();
  for (size_t i = 0; i < containers; ++i) {
    status.containers.push_back(find(i));
  }
  for (size_t i = 0; i < init; ++i) {
    status.init_containers.push_back(find(containers + i));
  }
}

}  // namespace

absl::Status AddResource(absl::string_view path, absl::string_view name,
                         absl::string_view quantity, pb::Resources* out) {
  absl::StatusOr<int64_t> v = ParseQuantity(quantity, name == "cpu" ? -3 : 0);
  if (!v.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ".", name, ": ", v.status().message()));
  }
  // Requests, overhead and allocatable are never negative (the API server
  // validates them); one that is would shrink its node's aggregate.
  if (*v < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ".", name, ": must not be negative, got \"", quantity, "\""));
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
    model::MutableScalar(out, std::string(name))->set_value(*v);
  }
  return absl::OkStatus();
}

bool NoteInvalid(const absl::Status& error, std::string* invalid) {
  if (invalid == nullptr) return false;
  if (invalid->empty()) *invalid = std::string(error.message());
  return true;
}

void AddPort(int64_t host_port, absl::string_view protocol,
             absl::string_view host_ip, absl::string_view container, int index,
             std::string* invalid, pb::Container* out) {
  if (host_port <= 0) return;
  if (host_port > 65535) {
    NoteInvalid(absl::InvalidArgumentError(absl::StrCat(
                    container, ".ports[", index,
                    "].hostPort: must be a port in 1..65535, got ", host_port)),
                invalid);
    return;
  }
  pb::ContainerPort* port = out->add_ports();
  port->set_host_port(static_cast<int32_t>(host_port));
  port->set_protocol(protocol.empty() ? "TCP" : std::string(protocol));
  port->set_host_ip(std::string(host_ip));
}

pb::NodeSelectorRequirement* AddRequirement(
    absl::string_view key, absl::string_view op,
    google::protobuf::RepeatedPtrField<pb::NodeSelectorRequirement>* out) {
  pb::NodeSelectorRequirement* r = out->Add();
  r->set_key(std::string(key));
  r->set_operator_(std::string(op));
  return r;
}

void AddToleration(absl::string_view key, absl::string_view op,
                   absl::string_view value, absl::string_view effect,
                   pb::Pod* out) {
  pb::Toleration* t = out->add_tolerations();
  t->set_key(std::string(key));
  t->set_operator_(std::string(op));
  t->set_value(std::string(value));
  t->set_effect(std::string(effect));
}

void AddTaint(absl::string_view key, absl::string_view value,
              absl::string_view effect, pb::Node* out) {
  pb::Taint* t = out->add_taints();
  t->set_key(std::string(key));
  t->set_value(std::string(value));
  t->set_effect(std::string(effect));
}

void AddCondition(absl::string_view type, absl::string_view status,
                  absl::string_view reason, absl::string_view message,
                  PodInfo* p) {
  if (type == "PodScheduled" && status == "False") {
    p->unschedulable_message = std::string(message);
  }
  if (type == "PodResizePending" && !p->seen_resize_pending) {
    p->seen_resize_pending = true;
    p->resource_status.resize_infeasible = reason == "Infeasible";
  }
  if (type == "DisruptionTarget" && !p->seen_disruption_target) {
    p->seen_disruption_target = true;
    p->preempted_by_scheduler =
        status == "True" && reason == "PreemptionByScheduler";
  }
}

std::optional<pb::Resources> StatusList(pb::Resources list, bool has_entries) {
  if (!has_entries) return std::nullopt;
  return list;
}

void AddContainerStatus(absl::string_view name,
                        std::optional<pb::Resources> allocated,
                        std::optional<pb::Resources> actuated, PodInfo* p) {
  PodInfo::ContainerStatus& s = p->container_statuses.emplace_back();
  s.name = std::string(name);
  s.resources.allocated = std::move(allocated);
  s.resources.actuated = std::move(actuated);
}

void SetPodStatusResources(std::optional<pb::Resources> allocated,
                           bool has_resources,
                           std::optional<pb::Resources> actuated, PodInfo* p) {
  p->resource_status.allocated = std::move(allocated);
  p->resource_status.has_resources = has_resources;
  p->resource_status.actuated = std::move(actuated);
}

pb::LabelSelectorRequirement* AddSelectorRequirement(absl::string_view key,
                                                     absl::string_view op,
                                                     pb::LabelSelector* out) {
  pb::LabelSelectorRequirement* r = out->add_match_expressions();
  r->set_key(std::string(key));
  r->set_operator_(std::string(op));
  return r;
}

pb::PodAffinityTerm* AddAffinityTerm(absl::string_view topology_key,
                                     pb::PodAffinity* out) {
  pb::PodAffinityTerm* t = out->add_required();
  t->set_topology_key(std::string(topology_key));
  return t;
}

pb::PodAffinityTerm* AddPreferredAffinityTerm(int32_t weight,
                                              absl::string_view topology_key,
                                              pb::PodAffinity* out) {
  pb::WeightedPodAffinityTerm* t = out->add_preferred();
  t->set_weight(weight);
  t->mutable_term()->set_topology_key(std::string(topology_key));
  return t->mutable_term();
}

pb::TopologySpreadConstraint* AddSpreadConstraint(
    int32_t max_skew, absl::string_view topology_key,
    absl::string_view when_unsatisfiable,
    absl::string_view node_affinity_policy,
    absl::string_view node_taints_policy, pb::Pod* out) {
  pb::TopologySpreadConstraint* t = out->add_topology_spread_constraints();
  t->set_max_skew(max_skew);
  t->set_topology_key(std::string(topology_key));
  t->set_when_unsatisfiable(std::string(when_unsatisfiable));
  t->set_node_affinity_policy(std::string(node_affinity_policy));
  t->set_node_taints_policy(std::string(node_taints_policy));
  return t;
}

void AddOwnerReference(absl::string_view api_version, absl::string_view kind,
                       absl::string_view name, absl::string_view uid,
                       bool controller, PodInfo* p) {
  if (!controller || !p->controller_kind.empty()) return;
  p->controller_api_version = std::string(api_version);
  p->controller_kind = std::string(kind);
  p->controller_name = std::string(name);
  p->controller_uid = std::string(uid);
}

void AddImage(absl::string_view image, pb::Pod* out) {
  out->add_images(std::string(image));
}

void AddImageVolume(absl::string_view reference, pb::Pod* out) {
  out->add_images(std::string(reference));
  out->set_image_volumes(out->image_volumes() + 1);
}

void AddVolume(absl::string_view name, bool claim, absl::string_view claim_name,
               bool ephemeral, pb::Pod* out) {
  if (!claim && !ephemeral) return;
  pb::VolumeClaim* c = out->add_volume_claims();
  c->set_volume(std::string(name));
  c->set_claim_name(std::string(claim_name));
  c->set_ephemeral(ephemeral);
}

pb::InlineDisk* AddInlineDisk(pb::DiskKind kind, absl::string_view id,
                              bool read_only, pb::Pod* out) {
  pb::InlineDisk* d = out->add_inline_disks();
  d->set_kind(kind);
  d->set_id(std::string(id));
  d->set_read_only(read_only);
  return d;
}

pb::InTreeVolume* AddInTreeVolume(absl::string_view name,
                                  absl::string_view plugin,
                                  absl::string_view id, pb::Pod* out) {
  pb::InTreeVolume* v = out->add_in_tree_volumes();
  v->set_name(std::string(name));
  v->set_plugin(std::string(plugin));
  v->set_id(std::string(id));
  v->set_claims_before(out->volume_claims_size());
  return v;
}

void AddResourceClaim(absl::string_view name, pb::Pod* out) {
  out->add_resource_claims(std::string(name));
}

absl::Status FinishPod(PodInfo* p) {
  if (p->name.empty()) {
    return absl::InvalidArgumentError("pod without metadata.name");
  }
  p->key = absl::StrCat(p->namespace_, "/", p->name);
  if (p->scheduler_name.empty()) p->scheduler_name = "default-scheduler";
  pb::Pod& pod = p->pod;
  pod.set_namespace_(p->namespace_);
  pod.set_name(p->name);
  pod.set_uid(p->uid);
  pod.set_priority(p->priority);
  MatchContainerStatuses(p);
  model::AssignedPodResources r =
      model::AssignedPodRequests(pod, p->resource_status);
  p->requests = std::move(r.requests);
  p->non_zero = std::move(r.non_zero);
  HostPorts(p);
  // What the API server validates and the decoders pass through (spread
  // constraints' maxSkew, terms' weights...): a pod the scorer would refuse
  // is reported unschedulable with the scorer's reason instead of sent.
  if (p->invalid.empty()) {
    if (absl::Status s = model::CheckPodNumbers(pod, "pod"); !s.ok()) {
      p->invalid = std::string(s.message());
    }
  }
  return absl::OkStatus();
}

NodeImage* AddNodeImage(int64_t size_bytes, NodeInfo* out) {
  NodeImage& image = out->images.emplace_back();
  // The scorer refuses a negative size (the kubelet never reports one): as
  // an unknown size, it scores nothing.
  image.size_bytes = std::max<int64_t>(size_bytes, 0);
  return &image;
}

absl::Status FinishNode(NodeInfo* n) {
  if (n->node.name().empty()) {
    return absl::InvalidArgumentError("node without metadata.name");
  }
  n->images_digest = ImagesDigest(n->images);
  return absl::OkStatus();
}

absl::Status FinishNamespace(const NamespaceInfo& ns) {
  if (ns.name.empty()) {
    return absl::InvalidArgumentError("namespace without metadata.name");
  }
  return absl::OkStatus();
}

absl::Status FinishWorkload(bool selector_set, WorkloadInfo* w) {
  if (w->name.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(WorkloadKindName(w->kind), " without metadata.name"));
  }
  switch (w->kind) {
    case WorkloadKind::kService:
    case WorkloadKind::kReplicationController:
      // A map: empty and unset are one on the wire, and select no pod
      // either way (a Service's nil selector "matches nothing", and an
      // empty map adds nothing to DefaultSelector's set).
      w->has_selector = !w->selector.match_labels().empty();
      break;
    case WorkloadKind::kReplicaSet:
    case WorkloadKind::kStatefulSet:
      w->has_selector = selector_set;
      break;
  }
  return absl::OkStatus();
}

absl::Status FinishPdb(bool selector_set, PdbInfo* p) {
  if (p->name.empty()) {
    return absl::InvalidArgumentError(
        "PodDisruptionBudget without metadata.name");
  }
  p->has_selector = selector_set;
  return absl::OkStatus();
}

}  // namespace kscore::objects::fields
