// The JSON decoders; objects_proto.cc reads the protobuf encoding into the
// same shapes through the same field helpers (object_fields.h). Each first
// checks the types of the fields it reads (json_shape.h), so the lenient
// accessors below meet only absent, null or well-typed values.
#include "shim/objects/objects.h"

#include <optional>
#include <utility>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "shim/objects/json_read.h"
#include "shim/objects/json_shape.h"
#include "shim/objects/object_fields.h"
#include "shim/objects/storage.h"

namespace kscore::objects {
namespace {

using json_read::At;
using json_read::Requirements;
using json_read::Selector;
using json_read::Str;
using json_read::StringMap;
using json_read::Strings;
using json_read::Term;
using nlohmann::json;

bool NonEmptyArray(const json& j) { return j.is_array() && !j.empty(); }
bool NonEmptyObject(const json& j) { return j.is_object() && !j.empty(); }

// A ResourceList ({"cpu": "100m", "memory": "1Gi", ...}) into pb::Resources.
// A bad entry is an error, or with `invalid` (a pod's lists) noted there
// and left out (fields::NoteInvalid).
absl::Status Resources(const json& list, const std::string& path,
                       pb::Resources* out, std::string* invalid = nullptr) {
  if (!list.is_object()) return absl::OkStatus();
  for (auto it = list.begin(); it != list.end(); ++it) {
    absl::Status s =
        it.value().is_string()
            ? fields::AddResource(path, it.key(),
                                  it.value().get_ref<const std::string&>(), out)
            : absl::InvalidArgumentError(
                  absl::StrCat(path, ".", it.key(), ": not a quantity"));
    if (!s.ok() && !fields::NoteInvalid(s, invalid)) return s;
  }
  return absl::OkStatus();
}

void NodeAffinity(const json& node_affinity, pb::Pod* pod) {
  if (node_affinity.is_null()) return;
  const json& required =
      At(node_affinity, "requiredDuringSchedulingIgnoredDuringExecution");
  if (!required.is_null()) {
    pod->mutable_node_affinity()->set_has_required(true);
    for (const json& t : At(required, "nodeSelectorTerms")) {
      Term(t, pod->mutable_node_affinity()->add_required());
    }
  }
  for (const json& t :
       At(node_affinity, "preferredDuringSchedulingIgnoredDuringExecution")) {
    pb::PreferredSchedulingTerm* pt =
        pod->mutable_node_affinity()->add_preferred();
    if (const json& w = At(t, "weight"); w.is_number_integer())
      pt->set_weight(w.get<int32_t>());
    Term(At(t, "preference"), pt->mutable_preference());
  }
}

absl::Status Container(const json& c, const std::string& path,
                       pb::Container* out, PodInfo* p) {
  p->container_names.push_back(Str(c, "name"));
  if (absl::Status s = Resources(At(At(c, "resources"), "requests"),
                                 path + ".resources.requests",
                                 out->mutable_requests(), &p->invalid);
      !s.ok()) {
    return s;
  }
  out->set_restart_policy(Str(c, "restartPolicy"));
  for (const json& r : At(c, "restartPolicyRules")) {
    out->add_restart_rule_actions(Str(r, "action"));
  }
  for (const json& m : At(c, "volumeMounts")) {
    if (NonEmptyArray(At(m, "bindMountOptions")))
      out->set_bind_mount_options(true);
  }
  int i = 0;
  for (const json& port : At(c, "ports")) {
    const json& hp = At(port, "hostPort");
    if (hp.is_number_integer()) {
      fields::AddPort(hp.get<int64_t>(), Str(port, "protocol"),
                      Str(port, "hostIP"), path, i, &p->invalid, out);
    }
    ++i;
  }
  return absl::OkStatus();
}

absl::Status Containers(const json& spec, PodInfo* p) {
  pb::Pod* pod = &p->pod;
  int i = 0;
  for (const json& c : At(spec, "containers")) {
    if (absl::Status s =
            Container(c, absl::StrCat("spec.containers[", i++, "]"),
                      pod->add_containers(), p);
        !s.ok()) {
      return s;
    }
  }
  i = 0;
  for (const json& c : At(spec, "initContainers")) {
    if (absl::Status s =
            Container(c, absl::StrCat("spec.initContainers[", i++, "]"),
                      pod->add_init_containers(), p);
        !s.ok()) {
      return s;
    }
  }
  if (const json& requests = At(At(spec, "resources"), "requests");
      NonEmptyObject(requests)) {
    if (absl::Status s =
            Resources(requests, "spec.resources.requests",
                      pod->mutable_pod_level_requests(), &p->invalid);
        !s.ok()) {
      return s;
    }
  }
  return Resources(At(spec, "overhead"), "spec.overhead",
                   pod->mutable_overhead(), &p->invalid);
}

// A resource list of the status, set when it has entries.
absl::StatusOr<std::optional<pb::Resources>> StatusList(const json& list,
                                                        const std::string& path,
                                                        PodInfo* p) {
  pb::Resources r;
  KSCORE_RETURN_IF_ERROR(Resources(list, path, &r, &p->invalid));
  return fields::StatusList(std::move(r), NonEmptyObject(list));
}

// What the kubelet reports of the containers' and the pod's resources.
absl::Status StatusResources(const json& status, PodInfo* p) {
  for (const char* list : {"containerStatuses", "initContainerStatuses"}) {
    int i = 0;
    for (const json& cs : At(status, list)) {
      const std::string path = absl::StrCat("status.", list, "[", i++, "]");
      KSCORE_ASSIGN_OR_RETURN(std::optional<pb::Resources> allocated,
                              StatusList(At(cs, "allocatedResources"),
                                         path + ".allocatedResources", p));
      KSCORE_ASSIGN_OR_RETURN(std::optional<pb::Resources> actuated,
                              StatusList(At(At(cs, "resources"), "requests"),
                                         path + ".resources.requests", p));
      fields::AddContainerStatus(Str(cs, "name"), std::move(allocated),
                                 std::move(actuated), p);
    }
  }
  KSCORE_ASSIGN_OR_RETURN(std::optional<pb::Resources> allocated,
                          StatusList(At(status, "allocatedResources"),
                                     "status.allocatedResources", p));
  const json& resources = At(status, "resources");
  KSCORE_ASSIGN_OR_RETURN(
      std::optional<pb::Resources> actuated,
      StatusList(At(resources, "requests"), "status.resources.requests", p));
  fields::SetPodStatusResources(std::move(allocated), resources.is_object(),
                                std::move(actuated), p);
  return absl::OkStatus();
}

void AffinityTerm(const json& t, pb::PodAffinityTerm* out) {
  Selector(At(t, "labelSelector"),
           [out] { return out->mutable_label_selector(); });
  Strings(At(t, "namespaces"), out->mutable_namespaces());
  Selector(At(t, "namespaceSelector"),
           [out] { return out->mutable_namespace_selector(); });
}

void AffinityTerms(const json& j, pb::PodAffinity* out) {
  for (const json& t :
       At(j, "requiredDuringSchedulingIgnoredDuringExecution")) {
    AffinityTerm(t, fields::AddAffinityTerm(Str(t, "topologyKey"), out));
  }
  for (const json& w :
       At(j, "preferredDuringSchedulingIgnoredDuringExecution")) {
    const json& weight = At(w, "weight");
    const json& t = At(w, "podAffinityTerm");
    AffinityTerm(t, fields::AddPreferredAffinityTerm(
                        weight.is_number_integer() ? weight.get<int32_t>() : 0,
                        Str(t, "topologyKey"), out));
  }
}

void SpreadConstraint(const json& c, pb::Pod* pod) {
  const json& skew = At(c, "maxSkew");
  pb::TopologySpreadConstraint* t = fields::AddSpreadConstraint(
      skew.is_number_integer() ? skew.get<int32_t>() : 0, Str(c, "topologyKey"),
      Str(c, "whenUnsatisfiable"), Str(c, "nodeAffinityPolicy"),
      Str(c, "nodeTaintsPolicy"), pod);
  Selector(At(c, "labelSelector"), [t] { return t->mutable_label_selector(); });
  if (const json& m = At(c, "minDomains"); m.is_number_integer())
    t->set_min_domains(m.get<int32_t>());
  Strings(At(c, "matchLabelKeys"), t->mutable_match_label_keys());
}

// The images of the init containers, the containers and the image volumes.
void Images(const json& spec, pb::Pod* pod) {
  for (const char* list : {"initContainers", "containers"}) {
    for (const json& c : At(spec, list)) fields::AddImage(Str(c, "image"), pod);
  }
  for (const json& v : At(spec, "volumes")) {
    if (const json& image = At(v, "image"); image.is_object())
      fields::AddImageVolume(Str(image, "reference"), pod);
  }
}

bool Bool(const json& j, const char* key) {
  const json& b = At(j, key);
  return b.is_boolean() && b.get<bool>();
}

// A volume's in-tree disks (pb::Pod::inline_disks).
void InlineDisks(const json& v, pb::Pod* pod) {
  if (const json& d = At(v, "gcePersistentDisk"); d.is_object()) {
    fields::AddInlineDisk(pb::DISK_KIND_GCE_PD, Str(d, "pdName"),
                          Bool(d, "readOnly"), pod);
  }
  if (const json& d = At(v, "awsElasticBlockStore"); d.is_object()) {
    fields::AddInlineDisk(pb::DISK_KIND_AWS_EBS, Str(d, "volumeID"),
                          Bool(d, "readOnly"), pod);
  }
  if (const json& d = At(v, "iscsi"); d.is_object()) {
    fields::AddInlineDisk(pb::DISK_KIND_ISCSI, Str(d, "iqn"),
                          Bool(d, "readOnly"), pod);
  }
  if (const json& d = At(v, "rbd"); d.is_object()) {
    pb::InlineDisk* r = fields::AddInlineDisk(
        pb::DISK_KIND_RBD, Str(d, "image"), Bool(d, "readOnly"), pod);
    r->set_pool(Str(d, "pool"));
    Strings(At(d, "monitors"), r->mutable_monitors());
  }
}

// A volume of an in-tree plugin CSI migration knows
// (pb::Pod::in_tree_volumes), at most one: the API allows one source.
void MigratableVolume(const json& v, pb::Pod* pod) {
  struct Source {
    const char* field;
    const char* plugin;
    const char* id;  // nullptr: only its presence counts
  };
  static constexpr Source kSources[] = {
      {"awsElasticBlockStore", kPluginAwsEbs, "volumeID"},
      {"gcePersistentDisk", kPluginGcePd, "pdName"},
      {"azureDisk", kPluginAzureDisk, "diskURI"},
      {"cinder", kPluginCinder, "volumeID"},
      {"portworxVolume", kPluginPortworx, "volumeID"},
      {"azureFile", kPluginAzureFile, nullptr},
      {"vsphereVolume", kPluginVsphere, nullptr}};
  for (const Source& s : kSources) {
    const json& source = At(v, s.field);
    if (!source.is_object()) continue;
    pb::InTreeVolume* t =
        fields::AddInTreeVolume(Str(v, "name"), s.plugin,
                                s.id == nullptr ? "" : Str(source, s.id), pod);
    const json& kind = At(source, "kind");
    if (s.plugin == kPluginAzureDisk && kind.is_string())
      t->set_azure_kind(kind.get<std::string>());
    return;
  }
}

// What the scorer reads of the pod's inter-pod affinity, spread constraints,
// images, claimed volumes and resource claims (its plugins, or its gates for
// the plugins it does not run, decide what they mean).
void Requirements(const json& spec, pb::Pod* pod) {
  const json& affinity = At(spec, "affinity");
  AffinityTerms(At(affinity, "podAffinity"), pod->mutable_pod_affinity());
  AffinityTerms(At(affinity, "podAntiAffinity"),
                pod->mutable_pod_anti_affinity());
  for (const json& c : At(spec, "topologySpreadConstraints"))
    SpreadConstraint(c, pod);
  Images(spec, pod);
  for (const json& v : At(spec, "volumes")) {
    const json& pvc = At(v, "persistentVolumeClaim");
    fields::AddVolume(Str(v, "name"), !pvc.is_null(), Str(pvc, "claimName"),
                      !At(v, "ephemeral").is_null(), pod);
    InlineDisks(v, pod);
    MigratableVolume(v, pod);
  }
  for (const json& c : At(spec, "resourceClaims"))
    fields::AddResourceClaim(Str(c, "name"), pod);
}

// metadata and status, and the spec fields outside pb::Pod.
void PodMeta(const json& obj, PodInfo* p) {
  const json& meta = At(obj, "metadata");
  const json& spec = At(obj, "spec");
  p->namespace_ = Str(meta, "namespace");
  p->name = Str(meta, "name");
  p->uid = Str(meta, "uid");
  p->resource_version = Str(meta, "resourceVersion");
  p->deleting = !At(meta, "deletionTimestamp").is_null();
  p->created = ParseTime(Str(meta, "creationTimestamp"));
  StringMap(At(meta, "labels"), p->pod.mutable_labels());
  for (const json& o : At(meta, "ownerReferences")) {
    const json& controller = At(o, "controller");
    fields::AddOwnerReference(
        Str(o, "apiVersion"), Str(o, "kind"), Str(o, "name"), Str(o, "uid"),
        controller.is_boolean() && controller.get<bool>(), p);
  }
  p->scheduler_name = Str(spec, "schedulerName");
  p->node_name = Str(spec, "nodeName");
  p->gated = NonEmptyArray(At(spec, "schedulingGates"));
  if (const json& prio = At(spec, "priority"); prio.is_number_integer()) {
    p->priority = prio.get<int32_t>();
  }
  p->pod.set_preemption_policy(Str(spec, "preemptionPolicy"));
  const json& status = At(obj, "status");
  p->phase = Str(status, "phase");
  for (const json& c : At(status, "conditions")) {
    fields::AddCondition(Str(c, "type"), Str(c, "status"), Str(c, "reason"),
                         Str(c, "message"), p);
  }
  p->nominated_node_name = Str(status, "nominatedNodeName");
  if (const std::string start = Str(status, "startTime"); !start.empty()) {
    p->start_time = ParseTime(start);
  }
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
  KSCORE_RETURN_IF_ERROR(shape::Check(obj, shape::Pod()));
  const json& spec = At(obj, "spec");
  PodInfo p;
  PodMeta(obj, &p);
  pb::Pod& pod = p.pod;
  StringMap(At(spec, "nodeSelector"), pod.mutable_node_selector());
  NodeAffinity(At(At(spec, "affinity"), "nodeAffinity"), &pod);
  for (const json& t : At(spec, "tolerations")) {
    fields::AddToleration(Str(t, "key"), Str(t, "operator"), Str(t, "value"),
                          Str(t, "effect"), &pod);
  }
  if (const json& h = At(spec, "hostNetwork"); h.is_boolean())
    pod.set_host_network(h.get<bool>());
  if (const json& h = At(spec, "hostUsers"); h.is_boolean())
    pod.set_host_users(h.get<bool>());
  KSCORE_RETURN_IF_ERROR(Containers(spec, &p));
  KSCORE_RETURN_IF_ERROR(StatusResources(At(obj, "status"), &p));
  Requirements(spec, &pod);
  KSCORE_RETURN_IF_ERROR(fields::FinishPod(&p));
  return p;
}

absl::StatusOr<NodeInfo> NodeFromJson(const json& obj) {
  KSCORE_RETURN_IF_ERROR(shape::Check(obj, shape::Node()));
  const json& meta = At(obj, "metadata");
  const json& spec = At(obj, "spec");
  NodeInfo info;
  info.uid = Str(meta, "uid");
  info.resource_version = Str(meta, "resourceVersion");
  pb::Node& n = info.node;
  n.set_name(Str(meta, "name"));
  StringMap(At(meta, "labels"), n.mutable_labels());
  if (const json& u = At(spec, "unschedulable"); u.is_boolean())
    n.set_unschedulable(u.get<bool>());
  for (const json& t : At(spec, "taints")) {
    fields::AddTaint(Str(t, "key"), Str(t, "value"), Str(t, "effect"), &n);
  }
  if (absl::Status s = Resources(At(At(obj, "status"), "allocatable"),
                                 "status.allocatable", n.mutable_allocatable());
      !s.ok()) {
    return s;
  }
  Strings(At(At(obj, "status"), "declaredFeatures"),
          n.mutable_declared_features());
  for (const json& image : At(At(obj, "status"), "images")) {
    const json& size = At(image, "sizeBytes");
    NodeImage* out = fields::AddNodeImage(
        size.is_number_integer() ? size.get<int64_t>() : 0, &info);
    for (const json& name : At(image, "names")) {
      if (name.is_string()) out->names.push_back(name.get<std::string>());
    }
  }
  KSCORE_RETURN_IF_ERROR(fields::FinishNode(&info));
  return info;
}

uint64_t ImagesDigest(const std::vector<NodeImage>& images) {
  if (images.empty()) return 0;
  size_t digest = absl::HashOf(images.size());
  for (const NodeImage& image : images) {
    digest = absl::HashOf(digest, image.size_bytes, image.names);
  }
  return digest;
}

const char* WorkloadKindName(WorkloadKind kind) {
  switch (kind) {
    case WorkloadKind::kService:
      return "Service";
    case WorkloadKind::kReplicaSet:
      return "ReplicaSet";
    case WorkloadKind::kStatefulSet:
      return "StatefulSet";
    case WorkloadKind::kReplicationController:
      return "ReplicationController";
  }
  return "?";
}

absl::StatusOr<NamespaceInfo> NamespaceFromJson(const json& obj) {
  KSCORE_RETURN_IF_ERROR(shape::Check(obj, shape::Namespace()));
  const json& meta = At(obj, "metadata");
  NamespaceInfo ns;
  ns.name = Str(meta, "name");
  ns.uid = Str(meta, "uid");
  ns.resource_version = Str(meta, "resourceVersion");
  StringMap(At(meta, "labels"), &ns.labels);
  KSCORE_RETURN_IF_ERROR(fields::FinishNamespace(ns));
  return ns;
}

absl::StatusOr<WorkloadInfo> WorkloadFromJson(WorkloadKind kind,
                                              const json& obj) {
  const bool map_selector = kind == WorkloadKind::kService ||
                            kind == WorkloadKind::kReplicationController;
  KSCORE_RETURN_IF_ERROR(shape::Check(obj, shape::Workload(map_selector)));
  const json& meta = At(obj, "metadata");
  WorkloadInfo w;
  w.kind = kind;
  w.namespace_ = Str(meta, "namespace");
  w.name = Str(meta, "name");
  w.uid = Str(meta, "uid");
  w.resource_version = Str(meta, "resourceVersion");
  const json& selector = At(At(obj, "spec"), "selector");
  bool set = false;
  if (map_selector) {
    StringMap(selector, w.selector.mutable_match_labels());
  } else {
    Selector(selector, [&] {
      set = true;
      return &w.selector;
    });
  }
  KSCORE_RETURN_IF_ERROR(fields::FinishWorkload(set, &w));
  return w;
}

absl::StatusOr<PdbInfo> PdbFromJson(const json& obj) {
  KSCORE_RETURN_IF_ERROR(shape::Check(obj, shape::Pdb()));
  const json& meta = At(obj, "metadata");
  const json& status = At(obj, "status");
  PdbInfo p;
  p.namespace_ = Str(meta, "namespace");
  p.name = Str(meta, "name");
  p.uid = Str(meta, "uid");
  p.resource_version = Str(meta, "resourceVersion");
  bool set = false;
  Selector(At(At(obj, "spec"), "selector"), [&] {
    set = true;
    return &p.selector;
  });
  if (const json& d = At(status, "disruptionsAllowed"); d.is_number_integer())
    p.disruptions_allowed = d.get<int32_t>();
  if (const json& d = At(status, "disruptedPods"); d.is_object()) {
    for (auto it = d.begin(); it != d.end(); ++it)
      p.disrupted_pods.insert(it.key());
  }
  KSCORE_RETURN_IF_ERROR(fields::FinishPdb(set, &p));
  return p;
}

}  // namespace kscore::objects
