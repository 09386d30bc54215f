#include "shim/objects/storage.h"

#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"
#include "shim/objects/json_read.h"
#include "shim/objects/json_shape.h"
#include "shim/objects/quantity.h"

namespace kscore::objects {
namespace {

using json_read::At;
using json_read::Selector;
using json_read::Str;
using json_read::StringMap;
using json_read::Strings;
using json_read::Term;
using nlohmann::json;
using shape::Field;
using T = shape::Type;

// The fields each decoder reads, with the API's names (json_shape.h).
constexpr Field kRequirement[] = {
    {"key", T::kString}, {"operator", T::kString}, {"values", T::kStrings}};
constexpr Field kSelector[] = {{"matchLabels", T::kStringMap},
                               {"matchExpressions", T::kArray, kRequirement}};
constexpr Field kOwner[] = {{"uid", T::kString}, {"controller", T::kBool}};
constexpr Field kMeta[] = {{"namespace", T::kString},
                           {"name", T::kString},
                           {"uid", T::kString},
                           {"resourceVersion", T::kString},
                           {"labels", T::kStringMap},
                           {"annotations", T::kStringMap},
                           {"deletionTimestamp", T::kString},
                           {"ownerReferences", T::kArray, kOwner}};
constexpr Field kResources[] = {{"requests", T::kObject}};
constexpr Field kClaimSpec[] = {{"volumeName", T::kString},
                                {"storageClassName", T::kString},
                                {"accessModes", T::kStrings},
                                {"resources", T::kObject, kResources},
                                {"selector", T::kObject, kSelector},
                                {"volumeMode", T::kString},
                                {"volumeAttributesClassName", T::kString}};
constexpr Field kPhase[] = {{"phase", T::kString}};
constexpr Field kClaim[] = {{"metadata", T::kObject, kMeta},
                            {"spec", T::kObject, kClaimSpec},
                            {"status", T::kObject, kPhase}};
constexpr Field kTerm[] = {{"matchExpressions", T::kArray, kRequirement},
                           {"matchFields", T::kArray, kRequirement}};
constexpr Field kNodeSelector[] = {{"nodeSelectorTerms", T::kArray, kTerm}};
constexpr Field kVolumeAffinity[] = {{"required", T::kObject, kNodeSelector}};
constexpr Field kClaimRef[] = {
    {"namespace", T::kString}, {"name", T::kString}, {"uid", T::kString}};
constexpr Field kCsiSource[] = {{"driver", T::kString},
                                {"volumeHandle", T::kString}};
constexpr Field kVolumeIdSource[] = {{"volumeID", T::kString}};
constexpr Field kGcePdSource[] = {{"pdName", T::kString}};
constexpr Field kAzureDiskSource[] = {{"diskURI", T::kString},
                                      {"kind", T::kString}};
constexpr Field kVolumeSpec[] = {
    {"capacity", T::kObject},
    {"accessModes", T::kStrings},
    {"volumeMode", T::kString},
    {"storageClassName", T::kString},
    {"nodeAffinity", T::kObject, kVolumeAffinity},
    {"claimRef", T::kObject, kClaimRef},
    {"volumeAttributesClassName", T::kString},
    {"csi", T::kObject, kCsiSource},
    {"awsElasticBlockStore", T::kObject, kVolumeIdSource},
    {"gcePersistentDisk", T::kObject, kGcePdSource},
    {"azureDisk", T::kObject, kAzureDiskSource},
    {"cinder", T::kObject, kVolumeIdSource},
    {"portworxVolume", T::kObject, kVolumeIdSource}};
constexpr Field kVolume[] = {{"metadata", T::kObject, kMeta},
                             {"spec", T::kObject, kVolumeSpec},
                             {"status", T::kObject, kPhase}};
constexpr Field kTopologyRequirement[] = {{"key", T::kString},
                                          {"values", T::kStrings}};
constexpr Field kTopologyTerm[] = {
    {"matchLabelExpressions", T::kArray, kTopologyRequirement}};
constexpr Field kStorageClass[] = {
    {"metadata", T::kObject, kMeta},
    {"provisioner", T::kString},
    {"volumeBindingMode", T::kString},
    {"allowedTopologies", T::kArray, kTopologyTerm}};
constexpr Field kDriverSpec[] = {{"storageCapacity", T::kBool},
                                 {"preventPodSchedulingIfMissing", T::kBool}};
constexpr Field kDriver[] = {{"metadata", T::kObject, kMeta},
                             {"spec", T::kObject, kDriverSpec}};
constexpr Field kCapacity[] = {{"metadata", T::kObject, kMeta},
                               {"storageClassName", T::kString},
                               {"nodeTopology", T::kObject, kSelector},
                               {"capacity", T::kString},
                               {"maximumVolumeSize", T::kString}};

constexpr Field kAllocatable[] = {{"count", T::kInt32}};
constexpr Field kCsiNodeDriver[] = {{"name", T::kString},
                                    {"allocatable", T::kObject, kAllocatable}};
constexpr Field kCsiNodeSpec[] = {{"drivers", T::kArray, kCsiNodeDriver}};
constexpr Field kCsiNode[] = {{"metadata", T::kObject, kMeta},
                              {"spec", T::kObject, kCsiNodeSpec}};
constexpr Field kAttachSource[] = {{"persistentVolumeName", T::kString}};
constexpr Field kAttachSpec[] = {{"attacher", T::kString},
                                 {"nodeName", T::kString},
                                 {"source", T::kObject, kAttachSource}};
constexpr Field kAttachment[] = {{"metadata", T::kObject, kMeta},
                                 {"spec", T::kObject, kAttachSpec}};

// A quantity of bytes at `path`, rounded up; nullopt when absent.
absl::StatusOr<std::optional<int64_t>> Bytes(const json& q,
                                             const std::string& path) {
  if (q.is_null()) return std::nullopt;
  if (!q.is_string()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": expected a quantity (a string)"));
  }
  absl::StatusOr<int64_t> v = ParseQuantity(q.get_ref<const std::string&>(), 0);
  if (!v.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", v.status().message()));
  }
  return *v;
}

// GetPersistentVolume(Claim)Class: the beta annotation wins over the spec.
std::optional<std::string> ClassOf(const json& meta, const json& spec) {
  const json& ann = At(At(meta, "annotations"), kAnnBetaStorageClass);
  if (ann.is_string()) return ann.get<std::string>();
  const json& name = At(spec, "storageClassName");
  if (name.is_string()) return name.get<std::string>();
  return std::nullopt;
}

// A PersistentVolume's in-tree source CSI migration counts, if any (the
// first of them: the API allows one).
std::optional<pb::InTreeVolume> InTreeSource(const json& spec) {
  struct Source {
    const char* field;
    const char* plugin;
    const char* id;
  };
  static constexpr Source kSources[] = {
      {"awsElasticBlockStore", kPluginAwsEbs, "volumeID"},
      {"gcePersistentDisk", kPluginGcePd, "pdName"},
      {"azureDisk", kPluginAzureDisk, "diskURI"},
      {"cinder", kPluginCinder, "volumeID"},
      {"portworxVolume", kPluginPortworx, "volumeID"}};
  for (const Source& s : kSources) {
    const json& source = At(spec, s.field);
    if (!source.is_object()) continue;
    pb::InTreeVolume v;
    v.set_plugin(s.plugin);
    v.set_id(Str(source, s.id));
    const json& kind = At(source, "kind");
    if (s.plugin == kPluginAzureDisk && kind.is_string())
      v.set_azure_kind(kind.get<std::string>());
    return v;
  }
  return std::nullopt;
}

std::string ControllerUid(const json& meta) {
  for (const json& o : At(meta, "ownerReferences")) {
    if (At(o, "controller").is_boolean() && At(o, "controller").get<bool>())
      return Str(o, "uid");
  }
  return "";
}

absl::Status ClaimSpec(const json& meta, const json& spec, pb::ClaimState* s) {
  s->set_volume_name(Str(spec, "volumeName"));
  if (std::optional<std::string> c = ClassOf(meta, spec); c.has_value())
    s->set_storage_class_name(*c);
  Strings(At(spec, "accessModes"), s->mutable_access_modes());
  KSCORE_ASSIGN_OR_RETURN(
      std::optional<int64_t> request,
      Bytes(At(At(At(spec, "resources"), "requests"), "storage"),
            "spec.resources.requests.storage"));
  if (request.has_value()) s->set_storage_request(*request);
  Selector(At(spec, "selector"), [s] { return s->mutable_selector(); });
  s->set_volume_mode(Str(spec, "volumeMode"));
  s->set_volume_attributes_class_name(Str(spec, "volumeAttributesClassName"));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ClaimInfo> ClaimFromJson(const json& obj) {
  KSCORE_RETURN_IF_ERROR(shape::Check(obj, kClaim));
  const json& meta = At(obj, "metadata");
  ClaimInfo c;
  c.namespace_ = Str(meta, "namespace");
  c.name = Str(meta, "name");
  c.uid = Str(meta, "uid");
  c.resource_version = Str(meta, "resourceVersion");
  c.controller_uid = ControllerUid(meta);
  pb::ClaimState& s = c.state;
  s.set_name(c.name);
  s.set_uid(c.uid);
  s.set_found(true);
  s.set_phase(Str(At(obj, "status"), "phase"));
  s.set_deleting(!At(meta, "deletionTimestamp").is_null());
  const json& ann = At(meta, "annotations");
  s.set_bind_completed(!At(ann, kAnnBindCompleted).is_null());
  if (const json& n = At(ann, kAnnSelectedNode); n.is_string())
    s.set_selected_node(n.get<std::string>());
  KSCORE_RETURN_IF_ERROR(ClaimSpec(meta, At(obj, "spec"), &s));
  if (c.name.empty())
    return absl::InvalidArgumentError("claim without metadata.name");
  return c;
}

absl::StatusOr<VolumeInfo> VolumeFromJson(const json& obj) {
  KSCORE_RETURN_IF_ERROR(shape::Check(obj, kVolume));
  const json& meta = At(obj, "metadata");
  const json& spec = At(obj, "spec");
  VolumeInfo v;
  v.uid = Str(meta, "uid");
  v.resource_version = Str(meta, "resourceVersion");
  v.deleting = !At(meta, "deletionTimestamp").is_null();
  pb::PersistentVolume& pv = v.pv;
  pv.set_name(Str(meta, "name"));
  pv.set_storage_class_name(ClassOf(meta, spec).value_or(""));
  KSCORE_ASSIGN_OR_RETURN(
      std::optional<int64_t> capacity,
      Bytes(At(At(spec, "capacity"), "storage"), "spec.capacity.storage"));
  pv.set_capacity(capacity.value_or(0));
  Strings(At(spec, "accessModes"), pv.mutable_access_modes());
  pv.set_volume_mode(Str(spec, "volumeMode"));
  StringMap(At(meta, "labels"), pv.mutable_labels());
  const json& required = At(At(spec, "nodeAffinity"), "required");
  if (required.is_object()) {
    pv.set_has_node_affinity(true);
    for (const json& t : At(required, "nodeSelectorTerms"))
      Term(t, pv.add_node_affinity());
  }
  if (const json& ref = At(spec, "claimRef"); ref.is_object()) {
    pv.set_has_claim_ref(true);
    pv.set_claim_namespace(Str(ref, "namespace"));
    pv.set_claim_name(Str(ref, "name"));
    pv.set_claim_uid(Str(ref, "uid"));
  }
  pv.set_phase(Str(At(obj, "status"), "phase"));
  pv.set_volume_attributes_class_name(Str(spec, "volumeAttributesClassName"));
  v.has_csi = At(spec, "csi").is_object();
  v.csi_driver = Str(At(spec, "csi"), "driver");
  v.csi_handle = Str(At(spec, "csi"), "volumeHandle");
  v.in_tree = InTreeSource(spec);
  if (pv.name().empty())
    return absl::InvalidArgumentError("volume without metadata.name");
  return v;
}

absl::StatusOr<StorageClassInfo> StorageClassFromJson(const json& obj) {
  KSCORE_RETURN_IF_ERROR(shape::Check(obj, kStorageClass));
  const json& meta = At(obj, "metadata");
  StorageClassInfo c;
  c.resource_version = Str(meta, "resourceVersion");
  c.sc.set_name(Str(meta, "name"));
  c.sc.set_provisioner(Str(obj, "provisioner"));
  c.sc.set_volume_binding_mode(Str(obj, "volumeBindingMode"));
  for (const json& t : At(obj, "allowedTopologies")) {
    pb::TopologySelectorTerm* term = c.sc.add_allowed_topologies();
    for (const json& r : At(t, "matchLabelExpressions")) {
      pb::TopologySelectorRequirement* req =
          term->add_match_label_expressions();
      req->set_key(Str(r, "key"));
      Strings(At(r, "values"), req->mutable_values());
    }
  }
  if (c.sc.name().empty())
    return absl::InvalidArgumentError("storage class without metadata.name");
  return c;
}

absl::StatusOr<CsiDriverInfo> CsiDriverFromJson(const json& obj) {
  KSCORE_RETURN_IF_ERROR(shape::Check(obj, kDriver));
  const json& meta = At(obj, "metadata");
  CsiDriverInfo d;
  d.name = Str(meta, "name");
  d.resource_version = Str(meta, "resourceVersion");
  const json& cap = At(At(obj, "spec"), "storageCapacity");
  d.storage_capacity = cap.is_boolean() && cap.get<bool>();
  const json& prevent = At(At(obj, "spec"), "preventPodSchedulingIfMissing");
  d.prevent_if_missing = prevent.is_boolean() && prevent.get<bool>();
  if (d.name.empty())
    return absl::InvalidArgumentError("CSIDriver without metadata.name");
  return d;
}

absl::StatusOr<CapacityInfo> CapacityFromJson(const json& obj) {
  KSCORE_RETURN_IF_ERROR(shape::Check(obj, kCapacity));
  const json& meta = At(obj, "metadata");
  CapacityInfo c;
  c.namespace_ = Str(meta, "namespace");
  c.name = Str(meta, "name");
  c.resource_version = Str(meta, "resourceVersion");
  pb::StorageCapacity& cap = c.capacity;
  cap.set_name(absl::StrCat(c.namespace_, "/", c.name));
  cap.set_storage_class_name(Str(obj, "storageClassName"));
  Selector(At(obj, "nodeTopology"),
           [&cap] { return cap.mutable_node_topology(); });
  KSCORE_ASSIGN_OR_RETURN(std::optional<int64_t> capacity,
                          Bytes(At(obj, "capacity"), "capacity"));
  KSCORE_ASSIGN_OR_RETURN(
      std::optional<int64_t> max_size,
      Bytes(At(obj, "maximumVolumeSize"), "maximumVolumeSize"));
  if (capacity.has_value()) cap.set_capacity(*capacity);
  if (max_size.has_value()) {
    cap.set_limit(*max_size);
  } else if (capacity.has_value()) {
    cap.set_limit(*capacity);
  }
  if (c.name.empty())
    return absl::InvalidArgumentError(
        "CSIStorageCapacity without metadata.name");
  return c;
}

absl::StatusOr<CsiNodeInfo> CsiNodeFromJson(const json& obj) {
  KSCORE_RETURN_IF_ERROR(shape::Check(obj, kCsiNode));
  const json& meta = At(obj, "metadata");
  CsiNodeInfo n;
  n.name = Str(meta, "name");
  n.resource_version = Str(meta, "resourceVersion");
  for (const json& d : At(At(obj, "spec"), "drivers")) {
    CsiNodeInfo::Driver& driver = n.drivers.emplace_back();
    driver.name = Str(d, "name");
    const json& count = At(At(d, "allocatable"), "count");
    if (count.is_number_integer()) driver.limit = count.get<int64_t>();
  }
  if (n.name.empty())
    return absl::InvalidArgumentError("CSINode without metadata.name");
  return n;
}

absl::StatusOr<AttachmentInfo> AttachmentFromJson(const json& obj) {
  KSCORE_RETURN_IF_ERROR(shape::Check(obj, kAttachment));
  const json& meta = At(obj, "metadata");
  const json& spec = At(obj, "spec");
  AttachmentInfo a;
  a.name = Str(meta, "name");
  a.resource_version = Str(meta, "resourceVersion");
  a.attacher = Str(spec, "attacher");
  a.node = Str(spec, "nodeName");
  a.volume_name = Str(At(spec, "source"), "persistentVolumeName");
  if (a.name.empty())
    return absl::InvalidArgumentError("VolumeAttachment without metadata.name");
  return a;
}

}  // namespace kscore::objects
