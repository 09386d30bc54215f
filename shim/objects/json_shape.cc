#include "shim/objects/json_shape.h"

#include <cstdint>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace kscore::objects::shape {
namespace {

using nlohmann::json;
using T = Type;

// The fields each decoder reads, bottom up, with the API's names.
constexpr Field kSelectorRequirement[] = {
    {"key", T::kString}, {"operator", T::kString}, {"values", T::kStrings}};
constexpr Field kLabelSelector[] = {
    {"matchLabels", T::kStringMap},
    {"matchExpressions", T::kArray, kSelectorRequirement}};
constexpr Field kMetadata[] = {
    {"namespace", T::kString},       {"name", T::kString},
    {"generateName", T::kString},    {"uid", T::kString},
    {"resourceVersion", T::kString}, {"labels", T::kStringMap}};

constexpr Field kNodeSelectorTerm[] = {
    {"matchExpressions", T::kArray, kSelectorRequirement},
    {"matchFields", T::kArray, kSelectorRequirement}};
constexpr Field kNodeSelector[] = {
    {"nodeSelectorTerms", T::kArray, kNodeSelectorTerm}};
constexpr Field kPreferredSchedulingTerm[] = {
    {"weight", T::kInt32}, {"preference", T::kObject, kNodeSelectorTerm}};
constexpr Field kNodeAffinity[] = {
    {"requiredDuringSchedulingIgnoredDuringExecution", T::kObject,
     kNodeSelector},
    {"preferredDuringSchedulingIgnoredDuringExecution", T::kArray,
     kPreferredSchedulingTerm}};
constexpr Field kPodAffinityTerm[] = {
    {"labelSelector", T::kObject, kLabelSelector},
    {"namespaces", T::kStrings},
    {"namespaceSelector", T::kObject, kLabelSelector},
    {"topologyKey", T::kString}};
constexpr Field kWeightedPodAffinityTerm[] = {
    {"weight", T::kInt32}, {"podAffinityTerm", T::kObject, kPodAffinityTerm}};
constexpr Field kPodAffinity[] = {
    {"requiredDuringSchedulingIgnoredDuringExecution", T::kArray,
     kPodAffinityTerm},
    {"preferredDuringSchedulingIgnoredDuringExecution", T::kArray,
     kWeightedPodAffinityTerm}};
constexpr Field kAffinity[] = {{"nodeAffinity", T::kObject, kNodeAffinity},
                               {"podAffinity", T::kObject, kPodAffinity},
                               {"podAntiAffinity", T::kObject, kPodAffinity}};

// Resource lists are any object: objects.cc checks each quantity itself,
// and a bad one marks the pod invalid rather than refuse it.
constexpr Field kRequirements[] = {{"requests", T::kObject}};
constexpr Field kPort[] = {
    {"hostPort", T::kInt64}, {"protocol", T::kString}, {"hostIP", T::kString}};
constexpr Field kRule[] = {{"action", T::kString}};
constexpr Field kVolumeMount[] = {{"bindMountOptions", T::kArray}};
constexpr Field kContainer[] = {{"name", T::kString},
                                {"image", T::kString},
                                {"resources", T::kObject, kRequirements},
                                {"restartPolicy", T::kString},
                                {"restartPolicyRules", T::kArray, kRule},
                                {"volumeMounts", T::kArray, kVolumeMount},
                                {"ports", T::kArray, kPort}};
constexpr Field kToleration[] = {{"key", T::kString},
                                 {"operator", T::kString},
                                 {"value", T::kString},
                                 {"effect", T::kString}};
constexpr Field kSpreadConstraint[] = {
    {"maxSkew", T::kInt32},
    {"topologyKey", T::kString},
    {"whenUnsatisfiable", T::kString},
    {"nodeAffinityPolicy", T::kString},
    {"nodeTaintsPolicy", T::kString},
    {"labelSelector", T::kObject, kLabelSelector},
    {"minDomains", T::kInt32},
    {"matchLabelKeys", T::kStrings}};
constexpr Field kImageVolume[] = {{"reference", T::kString}};
constexpr Field kClaimSource[] = {{"claimName", T::kString}};
// The in-tree sources VolumeRestrictions and NodeVolumeLimits (CSI
// migration) read.
constexpr Field kVolumeIdSource[] = {{"volumeID", T::kString},
                                     {"readOnly", T::kBool}};
constexpr Field kGcePdSource[] = {{"pdName", T::kString},
                                  {"readOnly", T::kBool}};
constexpr Field kAzureDiskSource[] = {{"diskURI", T::kString},
                                      {"kind", T::kString}};
constexpr Field kVolume[] = {
    {"name", T::kString},
    {"image", T::kObject, kImageVolume},
    {"persistentVolumeClaim", T::kObject, kClaimSource},
    {"awsElasticBlockStore", T::kObject, kVolumeIdSource},
    {"gcePersistentDisk", T::kObject, kGcePdSource},
    {"azureDisk", T::kObject, kAzureDiskSource},
    {"cinder", T::kObject, kVolumeIdSource},
    {"portworxVolume", T::kObject, kVolumeIdSource},
    {"azureFile", T::kObject},
    {"vsphereVolume", T::kObject}};
constexpr Field kNamed[] = {{"name", T::kString}};
constexpr Field kPodSpec[] = {
    {"schedulerName", T::kString},
    {"nodeName", T::kString},
    {"schedulingGates", T::kArray},
    {"priority", T::kInt32},
    {"preemptionPolicy", T::kString},
    {"nodeSelector", T::kStringMap},
    {"affinity", T::kObject, kAffinity},
    {"tolerations", T::kArray, kToleration},
    {"hostNetwork", T::kBool},
    {"hostUsers", T::kBool},
    {"containers", T::kArray, kContainer},
    {"initContainers", T::kArray, kContainer},
    {"resources", T::kObject, kRequirements},
    {"overhead", T::kObject},
    {"topologySpreadConstraints", T::kArray, kSpreadConstraint},
    {"volumes", T::kArray, kVolume},
    {"resourceClaims", T::kArray, kNamed}};

constexpr Field kOwnerReference[] = {{"apiVersion", T::kString},
                                     {"kind", T::kString},
                                     {"name", T::kString},
                                     {"uid", T::kString},
                                     {"controller", T::kBool}};
constexpr Field kPodMetadata[] = {
    {"namespace", T::kString},
    {"name", T::kString},
    {"generateName", T::kString},
    {"uid", T::kString},
    {"resourceVersion", T::kString},
    {"creationTimestamp", T::kString},
    {"labels", T::kStringMap},
    {"ownerReferences", T::kArray, kOwnerReference}};
constexpr Field kCondition[] = {{"type", T::kString},
                                {"status", T::kString},
                                {"reason", T::kString},
                                {"message", T::kString}};
constexpr Field kContainerStatus[] = {{"name", T::kString},
                                      {"allocatedResources", T::kObject},
                                      {"resources", T::kObject, kRequirements}};
constexpr Field kPodStatus[] = {
    {"phase", T::kString},
    {"conditions", T::kArray, kCondition},
    {"nominatedNodeName", T::kString},
    {"startTime", T::kString},
    {"containerStatuses", T::kArray, kContainerStatus},
    {"initContainerStatuses", T::kArray, kContainerStatus},
    {"allocatedResources", T::kObject},
    {"resources", T::kObject, kRequirements}};
constexpr Field kPod[] = {{"metadata", T::kObject, kPodMetadata},
                          {"spec", T::kObject, kPodSpec},
                          {"status", T::kObject, kPodStatus}};

constexpr Field kTaint[] = {
    {"key", T::kString}, {"value", T::kString}, {"effect", T::kString}};
constexpr Field kNodeSpec[] = {{"unschedulable", T::kBool},
                               {"taints", T::kArray, kTaint}};
constexpr Field kImage[] = {{"names", T::kStrings}, {"sizeBytes", T::kInt64}};
constexpr Field kNodeStatus[] = {{"allocatable", T::kObject},
                                 {"declaredFeatures", T::kStrings},
                                 {"images", T::kArray, kImage}};
constexpr Field kNode[] = {{"metadata", T::kObject, kMetadata},
                           {"spec", T::kObject, kNodeSpec},
                           {"status", T::kObject, kNodeStatus}};

constexpr Field kNamespace[] = {{"metadata", T::kObject, kMetadata}};

constexpr Field kMapSelectorSpec[] = {{"selector", T::kStringMap}};
constexpr Field kLabelSelectorSpec[] = {
    {"selector", T::kObject, kLabelSelector}};
constexpr Field kMapSelectorWorkload[] = {
    {"metadata", T::kObject, kMetadata},
    {"spec", T::kObject, kMapSelectorSpec}};
constexpr Field kLabelSelectorWorkload[] = {
    {"metadata", T::kObject, kMetadata},
    {"spec", T::kObject, kLabelSelectorSpec}};

constexpr Field kPdbStatus[] = {{"disruptionsAllowed", T::kInt32},
                                {"disruptedPods", T::kObject}};
constexpr Field kPdb[] = {{"metadata", T::kObject, kMetadata},
                          {"spec", T::kObject, kLabelSelectorSpec},
                          {"status", T::kObject, kPdbStatus}};

const char* Expected(Type type) {
  switch (type) {
    case T::kString:
      return "a string";
    case T::kInt32:
      return "an integer (32 bits)";
    case T::kInt64:
      return "an integer (64 bits)";
    case T::kBool:
      return "a boolean";
    case T::kObject:
      return "an object";
    case T::kArray:
      return "an array";
    case T::kStrings:
      return "an array of strings";
    case T::kStringMap:
      return "an object of strings";
  }
  return "?";
}

bool FitsInt32(const json& v) {
  if (v.is_number_unsigned()) {
    return v.get<uint64_t>() <=
           static_cast<uint64_t>(std::numeric_limits<int32_t>::max());
  }
  const int64_t n = v.get<int64_t>();
  return n >= std::numeric_limits<int32_t>::min() &&
         n <= std::numeric_limits<int32_t>::max();
}

bool AllStrings(const json& v) {
  for (const json& e : v) {
    if (!e.is_string()) return false;
  }
  return true;
}

// Whether `v` has the type (its elements and values not looked into).
bool Is(const json& v, Type type) {
  switch (type) {
    case T::kString:
      return v.is_string();
    case T::kInt32:
      return v.is_number_integer() && FitsInt32(v);
    case T::kInt64:
      return v.is_number_integer() &&
             (!v.is_number_unsigned() ||
              v.get<uint64_t>() <=
                  static_cast<uint64_t>(std::numeric_limits<int64_t>::max()));
    case T::kBool:
      return v.is_boolean();
    case T::kObject:
      return v.is_object();
    case T::kArray:
      return v.is_array();
    case T::kStrings:
      return v.is_array() && AllStrings(v);
    case T::kStringMap:
      return v.is_object() && AllStrings(v);
  }
  return false;
}

// Where a value is: built only when an error names it, so that checking an
// object allocates nothing.
struct Path {
  const Path* parent;
  std::string_view name;  // of a field, or the array's when `index` is set
  int64_t index = -1;
};

std::string Render(const Path* p) {
  if (p == nullptr) return "";
  std::string out = Render(p->parent);
  if (p->index >= 0) return absl::StrCat(out, "[", p->index, "]");
  if (!out.empty()) out += '.';
  out += p->name;
  return out;
}

absl::Status Mismatch(const Path& at, const char* expected) {
  return absl::InvalidArgumentError(
      absl::StrCat(Render(&at), ": expected ", expected));
}

absl::Status CheckAt(const json& j, std::span<const Field> fields,
                     const Path* path) {
  for (const Field& f : fields) {
    const auto it = j.find(f.name);
    if (it == j.end() || it->is_null()) continue;
    const Path at{path, f.name};
    if (!Is(*it, f.type)) return Mismatch(at, Expected(f.type));
    if (f.fields.empty()) continue;
    if (f.type == T::kObject) {
      KSCORE_RETURN_IF_ERROR(CheckAt(*it, f.fields, &at));
      continue;
    }
    int64_t i = 0;
    for (const json& e : *it) {
      const Path element{&at, f.name, i++};
      if (!e.is_object()) return Mismatch(element, "an object");
      KSCORE_RETURN_IF_ERROR(CheckAt(e, f.fields, &element));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status Check(const json& j, std::span<const Field> fields,
                   std::string_view path) {
  if (path.empty()) return CheckAt(j, fields, nullptr);
  const Path root{nullptr, path};
  return CheckAt(j, fields, &root);
}

std::span<const Field> Pod() { return kPod; }
std::span<const Field> Node() { return kNode; }
std::span<const Field> Namespace() { return kNamespace; }
std::span<const Field> Pdb() { return kPdb; }
std::span<const Field> Workload(bool map_selector) {
  if (map_selector) return kMapSelectorWorkload;
  return kLabelSelectorWorkload;
}

}  // namespace kscore::objects::shape
