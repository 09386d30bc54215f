// The protobuf decoders: Kubernetes protobuf (k8s_subset.proto) straight
// into PodInfo, NodeInfo, NamespaceInfo, WorkloadInfo and PdbInfo, through
// the field helpers the JSON decoders use (object_fields.h).
#include <algorithm>
#include <optional>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "kscore/k8s/k8s_subset.pb.h"
#include "shim/kube/protobuf_codec.h"
#include "shim/objects/object_fields.h"
#include "shim/objects/objects.h"
#include "shim/objects/storage.h"

namespace kscore::objects {
namespace {

namespace k8s = ::kscore::k8s;
template <typename T>
using Repeated = google::protobuf::RepeatedPtrField<T>;

// In name order, as the JSON decoder reads them: a map's own order varies,
// and the extended resources are a list (compared in order).
using QuantityMap = google::protobuf::Map<std::string, k8s::Quantity>;

// A bad entry is an error, or with `invalid` (a pod's lists) noted there
// and left out (fields::NoteInvalid).
absl::Status Resources(const QuantityMap& list, const std::string& path,
                       pb::Resources* out, std::string* invalid = nullptr) {
  using Entry = QuantityMap::value_type;
  absl::InlinedVector<const Entry*, 8> sorted;
  for (const Entry& e : list) sorted.push_back(&e);
  std::sort(sorted.begin(), sorted.end(),
            [](const Entry* a, const Entry* b) { return a->first < b->first; });
  for (const Entry* e : sorted) {
    absl::Status s =
        fields::AddResource(path, e->first, e->second.string(), out);
    if (!s.ok() && !fields::NoteInvalid(s, invalid)) return s;
  }
  return absl::OkStatus();
}

void Requirements(const Repeated<k8s::NodeSelectorRequirement>& list,
                  Repeated<pb::NodeSelectorRequirement>* out) {
  for (const k8s::NodeSelectorRequirement& r : list) {
    fields::AddRequirement(r.key(), r.operator_(), out)
        ->mutable_values()
        ->CopyFrom(r.values());
  }
}

void Term(const k8s::NodeSelectorTerm& t, pb::NodeSelectorTerm* out) {
  Requirements(t.match_expressions(), out->mutable_match_expressions());
  Requirements(t.match_fields(), out->mutable_match_fields());
}

void NodeAffinity(const k8s::NodeAffinity& na, pb::Pod* pod) {
  if (na.has_required_during_scheduling_ignored_during_execution()) {
    pod->mutable_node_affinity()->set_has_required(true);
    for (const k8s::NodeSelectorTerm& t :
         na.required_during_scheduling_ignored_during_execution()
             .node_selector_terms()) {
      Term(t, pod->mutable_node_affinity()->add_required());
    }
  }
  for (const k8s::PreferredSchedulingTerm& t :
       na.preferred_during_scheduling_ignored_during_execution()) {
    pb::PreferredSchedulingTerm* pt =
        pod->mutable_node_affinity()->add_preferred();
    if (t.has_weight()) pt->set_weight(t.weight());
    Term(t.preference(), pt->mutable_preference());
  }
}

absl::Status Container(const k8s::Container& c, const std::string& path,
                       pb::Container* out, PodInfo* p) {
  p->container_names.push_back(c.name());
  if (absl::Status s =
          Resources(c.resources().requests(), path + ".resources.requests",
                    out->mutable_requests(), &p->invalid);
      !s.ok()) {
    return s;
  }
  out->set_restart_policy(c.restart_policy());
  for (const k8s::ContainerRestartRule& r : c.restart_policy_rules()) {
    out->add_restart_rule_actions(r.action());
  }
  for (const k8s::VolumeMount& m : c.volume_mounts()) {
    if (m.bind_mount_options_size() > 0) out->set_bind_mount_options(true);
  }
  for (int i = 0; i < c.ports_size(); ++i) {
    const k8s::ContainerPort& port = c.ports(i);
    fields::AddPort(port.host_port(), port.protocol(), port.host_ip(), path, i,
                    &p->invalid, out);
  }
  return absl::OkStatus();
}

absl::Status Containers(const k8s::PodSpec& spec, PodInfo* p) {
  pb::Pod* pod = &p->pod;
  for (int i = 0; i < spec.containers_size(); ++i) {
    if (absl::Status s = Container(spec.containers(i),
                                   absl::StrCat("spec.containers[", i, "]"),
                                   pod->add_containers(), p);
        !s.ok()) {
      return s;
    }
  }
  for (int i = 0; i < spec.init_containers_size(); ++i) {
    if (absl::Status s = Container(spec.init_containers(i),
                                   absl::StrCat("spec.initContainers[", i, "]"),
                                   pod->add_init_containers(), p);
        !s.ok()) {
      return s;
    }
  }
  if (!spec.resources().requests().empty()) {
    if (absl::Status s =
            Resources(spec.resources().requests(), "spec.resources.requests",
                      pod->mutable_pod_level_requests(), &p->invalid);
        !s.ok()) {
      return s;
    }
  }
  return Resources(spec.overhead(), "spec.overhead", pod->mutable_overhead(),
                   &p->invalid);
}

// A resource list of the status, set when it has entries.
absl::StatusOr<std::optional<pb::Resources>> StatusList(const QuantityMap& list,
                                                        const std::string& path,
                                                        PodInfo* p) {
  pb::Resources r;
  KSCORE_RETURN_IF_ERROR(Resources(list, path, &r, &p->invalid));
  return fields::StatusList(std::move(r), !list.empty());
}

// What the kubelet reports of the containers' and the pod's resources.
absl::Status StatusResources(const k8s::PodStatus& status, PodInfo* p) {
  for (const auto& [name, list] :
       {std::pair{"containerStatuses", &status.container_statuses()},
        std::pair{"initContainerStatuses",
                  &status.init_container_statuses()}}) {
    for (int i = 0; i < list->size(); ++i) {
      const k8s::ContainerStatus& cs = list->Get(i);
      const std::string path = absl::StrCat("status.", name, "[", i, "]");
      KSCORE_ASSIGN_OR_RETURN(std::optional<pb::Resources> allocated,
                              StatusList(cs.allocated_resources(),
                                         path + ".allocatedResources", p));
      KSCORE_ASSIGN_OR_RETURN(std::optional<pb::Resources> actuated,
                              StatusList(cs.resources().requests(),
                                         path + ".resources.requests", p));
      fields::AddContainerStatus(cs.name(), std::move(allocated),
                                 std::move(actuated), p);
    }
  }
  KSCORE_ASSIGN_OR_RETURN(
      std::optional<pb::Resources> allocated,
      StatusList(status.allocated_resources(), "status.allocatedResources", p));
  KSCORE_ASSIGN_OR_RETURN(std::optional<pb::Resources> actuated,
                          StatusList(status.resources().requests(),
                                     "status.resources.requests", p));
  fields::SetPodStatusResources(std::move(allocated), status.has_resources(),
                                std::move(actuated), p);
  return absl::OkStatus();
}

// Call only for a selector that is set: an empty one selects everything.
void Selector(const k8s::LabelSelector& s, pb::LabelSelector* out) {
  out->mutable_match_labels()->insert(s.match_labels().begin(),
                                      s.match_labels().end());
  for (const k8s::LabelSelectorRequirement& r : s.match_expressions()) {
    fields::AddSelectorRequirement(r.key(), r.operator_(), out)
        ->mutable_values()
        ->CopyFrom(r.values());
  }
}

void AffinityTerm(const k8s::PodAffinityTerm& t, pb::PodAffinityTerm* out) {
  if (t.has_label_selector())
    Selector(t.label_selector(), out->mutable_label_selector());
  out->mutable_namespaces()->CopyFrom(t.namespaces());
  if (t.has_namespace_selector())
    Selector(t.namespace_selector(), out->mutable_namespace_selector());
}

void AffinityTerms(const k8s::PodAffinity& a, pb::PodAffinity* out) {
  for (const k8s::PodAffinityTerm& t :
       a.required_during_scheduling_ignored_during_execution()) {
    AffinityTerm(t, fields::AddAffinityTerm(t.topology_key(), out));
  }
  for (const k8s::WeightedPodAffinityTerm& w :
       a.preferred_during_scheduling_ignored_during_execution()) {
    const k8s::PodAffinityTerm& t = w.pod_affinity_term();
    AffinityTerm(
        t, fields::AddPreferredAffinityTerm(w.weight(), t.topology_key(), out));
  }
}

void SpreadConstraint(const k8s::TopologySpreadConstraint& c, pb::Pod* pod) {
  pb::TopologySpreadConstraint* t = fields::AddSpreadConstraint(
      c.max_skew(), c.topology_key(), c.when_unsatisfiable(),
      c.node_affinity_policy(), c.node_taints_policy(), pod);
  if (c.has_label_selector())
    Selector(c.label_selector(), t->mutable_label_selector());
  if (c.has_min_domains()) t->set_min_domains(c.min_domains());
  t->mutable_match_label_keys()->CopyFrom(c.match_label_keys());
}

// The images of the init containers, the containers and the image volumes.
void Images(const k8s::PodSpec& spec, pb::Pod* pod) {
  for (const k8s::Container& c : spec.init_containers())
    fields::AddImage(c.image(), pod);
  for (const k8s::Container& c : spec.containers())
    fields::AddImage(c.image(), pod);
  for (const k8s::Volume& v : spec.volumes()) {
    if (v.volume_source().has_image())
      fields::AddImageVolume(v.volume_source().image().reference(), pod);
  }
}

// A volume's in-tree disks (pb::Pod::inline_disks).
void InlineDisks(const k8s::VolumeSource& v, pb::Pod* pod) {
  if (v.has_gce_persistent_disk()) {
    fields::AddInlineDisk(pb::DISK_KIND_GCE_PD,
                          v.gce_persistent_disk().pd_name(),
                          v.gce_persistent_disk().read_only(), pod);
  }
  if (v.has_aws_elastic_block_store()) {
    fields::AddInlineDisk(pb::DISK_KIND_AWS_EBS,
                          v.aws_elastic_block_store().volume_id(),
                          v.aws_elastic_block_store().read_only(), pod);
  }
  if (v.has_iscsi()) {
    fields::AddInlineDisk(pb::DISK_KIND_ISCSI, v.iscsi().iqn(),
                          v.iscsi().read_only(), pod);
  }
  if (v.has_rbd()) {
    pb::InlineDisk* r = fields::AddInlineDisk(
        pb::DISK_KIND_RBD, v.rbd().image(), v.rbd().read_only(), pod);
    r->set_pool(v.rbd().pool());
    r->mutable_monitors()->Add(v.rbd().monitors().begin(),
                               v.rbd().monitors().end());
  }
}

// A volume of an in-tree plugin CSI migration knows
// (pb::Pod::in_tree_volumes), as the JSON decoder reads it.
void MigratableVolume(const std::string& name, const k8s::VolumeSource& v,
                      pb::Pod* pod) {
  if (v.has_aws_elastic_block_store()) {
    fields::AddInTreeVolume(name, kPluginAwsEbs,
                            v.aws_elastic_block_store().volume_id(), pod);
  } else if (v.has_gce_persistent_disk()) {
    fields::AddInTreeVolume(name, kPluginGcePd,
                            v.gce_persistent_disk().pd_name(), pod);
  } else if (v.has_azure_disk()) {
    pb::InTreeVolume* t = fields::AddInTreeVolume(
        name, kPluginAzureDisk, v.azure_disk().disk_uri(), pod);
    if (v.azure_disk().has_kind()) t->set_azure_kind(v.azure_disk().kind());
  } else if (v.has_cinder()) {
    fields::AddInTreeVolume(name, kPluginCinder, v.cinder().volume_id(), pod);
  } else if (v.has_portworx_volume()) {
    fields::AddInTreeVolume(name, kPluginPortworx,
                            v.portworx_volume().volume_id(), pod);
  } else if (v.has_azure_file()) {
    fields::AddInTreeVolume(name, kPluginAzureFile, "", pod);
  } else if (v.has_vsphere_volume()) {
    fields::AddInTreeVolume(name, kPluginVsphere, "", pod);
  }
}

// Inter-pod affinity, spread constraints, images, claimed volumes and
// resource claims, as the JSON decoder reads them.
void Requirements(const k8s::PodSpec& spec, pb::Pod* pod) {
  AffinityTerms(spec.affinity().pod_affinity(), pod->mutable_pod_affinity());
  AffinityTerms(spec.affinity().pod_anti_affinity(),
                pod->mutable_pod_anti_affinity());
  for (const k8s::TopologySpreadConstraint& c :
       spec.topology_spread_constraints()) {
    SpreadConstraint(c, pod);
  }
  Images(spec, pod);
  for (const k8s::Volume& v : spec.volumes()) {
    const k8s::VolumeSource& source = v.volume_source();
    fields::AddVolume(v.name(), source.has_persistent_volume_claim(),
                      source.persistent_volume_claim().claim_name(),
                      source.has_ephemeral(), pod);
    InlineDisks(source, pod);
    MigratableVolume(v.name(), source, pod);
  }
  for (const k8s::PodResourceClaim& c : spec.resource_claims())
    fields::AddResourceClaim(c.name(), pod);
}

// metadata and status, and the spec fields outside pb::Pod.
void PodMeta(const k8s::Pod& obj, PodInfo* p) {
  const k8s::ObjectMeta& meta = obj.metadata();
  const k8s::PodSpec& spec = obj.spec();
  p->namespace_ = meta.namespace_();
  p->name = meta.name();
  p->uid = meta.uid();
  p->resource_version = meta.resource_version();
  p->deleting = meta.has_deletion_timestamp();
  p->created = meta.has_creation_timestamp()
                   ? absl::FromUnixSeconds(meta.creation_timestamp().seconds())
                   : absl::InfinitePast();
  p->pod.mutable_labels()->insert(meta.labels().begin(), meta.labels().end());
  for (const k8s::OwnerReference& o : meta.owner_references()) {
    fields::AddOwnerReference(o.api_version(), o.kind(), o.name(), o.uid(),
                              o.controller(), p);
  }
  p->scheduler_name = spec.scheduler_name();
  p->node_name = spec.node_name();
  p->gated = spec.scheduling_gates_size() > 0;
  p->priority = spec.priority();
  p->pod.set_preemption_policy(spec.preemption_policy());
  const k8s::PodStatus& status = obj.status();
  p->phase = status.phase();
  for (const k8s::PodCondition& c : status.conditions()) {
    fields::AddCondition(c.type(), c.status(), c.reason(), c.message(), p);
  }
  p->nominated_node_name = status.nominated_node_name();
  if (status.has_start_time()) {
    p->start_time = absl::FromUnixSeconds(status.start_time().seconds());
  }
}

void WorkloadMeta(WorkloadKind kind, const k8s::ObjectMeta& meta,
                  WorkloadInfo* w) {
  w->kind = kind;
  w->namespace_ = meta.namespace_();
  w->name = meta.name();
  w->uid = meta.uid();
  w->resource_version = meta.resource_version();
}

}  // namespace

absl::StatusOr<PodInfo> PodFromProto(absl::string_view raw) {
  k8s::Pod obj;
  KSCORE_RETURN_IF_ERROR(kube::ParseMessage(raw, "Pod", &obj));
  const k8s::PodSpec& spec = obj.spec();
  PodInfo p;
  PodMeta(obj, &p);
  pb::Pod& pod = p.pod;
  pod.mutable_node_selector()->insert(spec.node_selector().begin(),
                                      spec.node_selector().end());
  if (spec.affinity().has_node_affinity()) {
    NodeAffinity(spec.affinity().node_affinity(), &pod);
  }
  for (const k8s::Toleration& t : spec.tolerations()) {
    fields::AddToleration(t.key(), t.operator_(), t.value(), t.effect(), &pod);
  }
  pod.set_host_network(spec.host_network());
  if (spec.has_host_users()) pod.set_host_users(spec.host_users());
  KSCORE_RETURN_IF_ERROR(Containers(spec, &p));
  KSCORE_RETURN_IF_ERROR(StatusResources(obj.status(), &p));
  Requirements(spec, &pod);
  KSCORE_RETURN_IF_ERROR(fields::FinishPod(&p));
  return p;
}

absl::StatusOr<NodeInfo> NodeFromProto(absl::string_view raw) {
  k8s::Node obj;
  KSCORE_RETURN_IF_ERROR(kube::ParseMessage(raw, "Node", &obj));
  NodeInfo info;
  info.uid = obj.metadata().uid();
  info.resource_version = obj.metadata().resource_version();
  pb::Node& n = info.node;
  n.set_name(obj.metadata().name());
  n.mutable_labels()->insert(obj.metadata().labels().begin(),
                             obj.metadata().labels().end());
  n.set_unschedulable(obj.spec().unschedulable());
  for (const k8s::Taint& t : obj.spec().taints()) {
    fields::AddTaint(t.key(), t.value(), t.effect(), &n);
  }
  if (absl::Status s = Resources(obj.status().allocatable(),
                                 "status.allocatable", n.mutable_allocatable());
      !s.ok()) {
    return s;
  }
  n.mutable_declared_features()->CopyFrom(obj.status().declared_features());
  for (const k8s::ContainerImage& image : obj.status().images()) {
    fields::AddNodeImage(image.size_bytes(), &info)
        ->names.assign(image.names().begin(), image.names().end());
  }
  KSCORE_RETURN_IF_ERROR(fields::FinishNode(&info));
  return info;
}

absl::StatusOr<NamespaceInfo> NamespaceFromProto(absl::string_view raw) {
  k8s::Namespace obj;
  KSCORE_RETURN_IF_ERROR(kube::ParseMessage(raw, "Namespace", &obj));
  NamespaceInfo ns;
  ns.name = obj.metadata().name();
  ns.uid = obj.metadata().uid();
  ns.resource_version = obj.metadata().resource_version();
  ns.labels.insert(obj.metadata().labels().begin(),
                   obj.metadata().labels().end());
  KSCORE_RETURN_IF_ERROR(fields::FinishNamespace(ns));
  return ns;
}

absl::StatusOr<WorkloadInfo> WorkloadFromProto(WorkloadKind kind,
                                               absl::string_view raw) {
  WorkloadInfo w;
  bool set = false;
  if (kind == WorkloadKind::kService ||
      kind == WorkloadKind::kReplicationController) {
    k8s::MapSelectorObject obj;
    if (absl::Status s = kube::ParseMessage(raw, WorkloadKindName(kind), &obj);
        !s.ok()) {
      return s;
    }
    WorkloadMeta(kind, obj.metadata(), &w);
    w.selector.mutable_match_labels()->insert(obj.spec().selector().begin(),
                                              obj.spec().selector().end());
  } else {
    k8s::LabelSelectorObject obj;
    if (absl::Status s = kube::ParseMessage(raw, WorkloadKindName(kind), &obj);
        !s.ok()) {
      return s;
    }
    WorkloadMeta(kind, obj.metadata(), &w);
    set = obj.spec().has_selector();
    if (set) Selector(obj.spec().selector(), &w.selector);
  }
  KSCORE_RETURN_IF_ERROR(fields::FinishWorkload(set, &w));
  return w;
}

absl::StatusOr<PdbInfo> PdbFromProto(absl::string_view raw) {
  k8s::PodDisruptionBudget obj;
  if (absl::Status s = kube::ParseMessage(raw, "PodDisruptionBudget", &obj);
      !s.ok()) {
    return s;
  }
  const k8s::ObjectMeta& meta = obj.metadata();
  PdbInfo p;
  p.namespace_ = meta.namespace_();
  p.name = meta.name();
  p.uid = meta.uid();
  p.resource_version = meta.resource_version();
  const bool set = obj.spec().has_selector();
  if (set) Selector(obj.spec().selector(), &p.selector);
  p.disruptions_allowed = obj.status().disruptions_allowed();
  for (const auto& entry : obj.status().disrupted_pods())
    p.disrupted_pods.insert(entry.first);
  KSCORE_RETURN_IF_ERROR(fields::FinishPdb(set, &p));
  return p;
}

}  // namespace kscore::objects
