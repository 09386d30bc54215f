#include "shim/kube/protobuf_codec.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "kscore/k8s/k8s_subset.pb.h"

namespace kscore::kube {
namespace {

using nlohmann::json;
namespace k8s = ::kscore::k8s;

constexpr absl::string_view kMagic("k8s\0", 4);

std::string Rfc3339(const k8s::Time& t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ",
                          absl::FromUnixSeconds(t.seconds()),
                          absl::UTCTimeZone());
}

json StringMap(const google::protobuf::Map<std::string, std::string>& m) {
  json out = json::object();
  for (const auto& [k, v] : m) out[k] = v;
  return out;
}

json Quantities(const google::protobuf::Map<std::string, k8s::Quantity>& m) {
  json out = json::object();
  for (const auto& [k, v] : m) out[k] = v.string();
  return out;
}

json Meta(const k8s::ObjectMeta& m) {
  json out = json::object();
  if (m.has_name()) out["name"] = m.name();
  if (m.has_namespace_()) out["namespace"] = m.namespace_();
  if (m.has_uid()) out["uid"] = m.uid();
  if (m.has_resource_version()) out["resourceVersion"] = m.resource_version();
  if (m.has_creation_timestamp())
    out["creationTimestamp"] = Rfc3339(m.creation_timestamp());
  if (m.has_deletion_timestamp())
    out["deletionTimestamp"] = Rfc3339(m.deletion_timestamp());
  if (!m.labels().empty()) out["labels"] = StringMap(m.labels());
  return out;
}

json Requirement(const k8s::NodeSelectorRequirement& r) {
  json out = {{"key", r.key()}, {"operator", r.operator_()}};
  if (r.values_size() > 0) {
    json values = json::array();
    for (const std::string& v : r.values()) values.push_back(v);
    out["values"] = std::move(values);
  }
  return out;
}

json Term(const k8s::NodeSelectorTerm& t) {
  json out = json::object();
  if (t.match_expressions_size() > 0) {
    json& e = out["matchExpressions"] = json::array();
    for (const auto& r : t.match_expressions()) e.push_back(Requirement(r));
  }
  if (t.match_fields_size() > 0) {
    json& f = out["matchFields"] = json::array();
    for (const auto& r : t.match_fields()) f.push_back(Requirement(r));
  }
  return out;
}

json PodAffinityTermJson(const k8s::PodAffinityTerm& t) {
  json out = json::object();
  if (t.has_topology_key()) out["topologyKey"] = t.topology_key();
  return out;
}

json PodAffinityJson(const k8s::PodAffinity& a) {
  json out = json::object();
  if (a.required_during_scheduling_ignored_during_execution_size() > 0) {
    json& req = out["requiredDuringSchedulingIgnoredDuringExecution"] =
        json::array();
    for (const auto& t :
         a.required_during_scheduling_ignored_during_execution())
      req.push_back(PodAffinityTermJson(t));
  }
  if (a.preferred_during_scheduling_ignored_during_execution_size() > 0) {
    json& pref = out["preferredDuringSchedulingIgnoredDuringExecution"] =
        json::array();
    for (const auto& w :
         a.preferred_during_scheduling_ignored_during_execution()) {
      json one = {
          {"podAffinityTerm", PodAffinityTermJson(w.pod_affinity_term())}};
      if (w.has_weight()) one["weight"] = w.weight();
      pref.push_back(std::move(one));
    }
  }
  return out;
}

json AffinityJson(const k8s::Affinity& a) {
  json out = json::object();
  if (a.has_node_affinity()) {
    const k8s::NodeAffinity& na = a.node_affinity();
    json n = json::object();
    if (na.has_required_during_scheduling_ignored_during_execution()) {
      json terms = json::array();
      for (const auto& t :
           na.required_during_scheduling_ignored_during_execution()
               .node_selector_terms())
        terms.push_back(Term(t));
      n["requiredDuringSchedulingIgnoredDuringExecution"] = {
          {"nodeSelectorTerms", std::move(terms)}};
    }
    if (na.preferred_during_scheduling_ignored_during_execution_size() > 0) {
      json pref = json::array();
      for (const auto& p :
           na.preferred_during_scheduling_ignored_during_execution()) {
        json term = {{"preference", Term(p.preference())}};
        if (p.has_weight()) term["weight"] = p.weight();
        pref.push_back(std::move(term));
      }
      n["preferredDuringSchedulingIgnoredDuringExecution"] = std::move(pref);
    }
    out["nodeAffinity"] = std::move(n);
  }
  if (a.has_pod_affinity())
    out["podAffinity"] = PodAffinityJson(a.pod_affinity());
  if (a.has_pod_anti_affinity())
    out["podAntiAffinity"] = PodAffinityJson(a.pod_anti_affinity());
  return out;
}

json ContainerJson(const k8s::Container& c) {
  json out = json::object();
  if (c.has_resources() && !c.resources().requests().empty()) {
    out["resources"] = {{"requests", Quantities(c.resources().requests())}};
  }
  if (c.has_restart_policy()) out["restartPolicy"] = c.restart_policy();
  if (c.ports_size() > 0) {
    json& ports = out["ports"] = json::array();
    for (const k8s::ContainerPort& p : c.ports()) {
      json port = json::object();
      if (p.has_host_port()) port["hostPort"] = p.host_port();
      if (p.has_protocol()) port["protocol"] = p.protocol();
      if (p.has_host_ip()) port["hostIP"] = p.host_ip();
      ports.push_back(std::move(port));
    }
  }
  return out;
}

json SpecJson(const k8s::PodSpec& s) {
  json out = json::object();
  if (s.has_scheduler_name()) out["schedulerName"] = s.scheduler_name();
  if (s.has_node_name()) out["nodeName"] = s.node_name();
  if (s.has_priority()) out["priority"] = s.priority();
  if (!s.node_selector().empty())
    out["nodeSelector"] = StringMap(s.node_selector());
  if (s.has_affinity()) out["affinity"] = AffinityJson(s.affinity());
  if (s.tolerations_size() > 0) {
    json& tols = out["tolerations"] = json::array();
    for (const k8s::Toleration& t : s.tolerations()) {
      json tol = json::object();
      if (t.has_key()) tol["key"] = t.key();
      if (t.has_operator_()) tol["operator"] = t.operator_();
      if (t.has_value()) tol["value"] = t.value();
      if (t.has_effect()) tol["effect"] = t.effect();
      tols.push_back(std::move(tol));
    }
  }
  json& containers = out["containers"] = json::array();
  for (const k8s::Container& c : s.containers())
    containers.push_back(ContainerJson(c));
  if (s.init_containers_size() > 0) {
    json& init = out["initContainers"] = json::array();
    for (const k8s::Container& c : s.init_containers())
      init.push_back(ContainerJson(c));
  }
  if (!s.overhead().empty()) out["overhead"] = Quantities(s.overhead());
  if (s.topology_spread_constraints_size() > 0) {
    json& tsc = out["topologySpreadConstraints"] = json::array();
    for (const auto& c : s.topology_spread_constraints()) {
      json one = json::object();
      if (c.has_max_skew()) one["maxSkew"] = c.max_skew();
      if (c.has_topology_key()) one["topologyKey"] = c.topology_key();
      if (c.has_when_unsatisfiable())
        one["whenUnsatisfiable"] = c.when_unsatisfiable();
      tsc.push_back(std::move(one));
    }
  }
  if (s.scheduling_gates_size() > 0) {
    json& gates = out["schedulingGates"] = json::array();
    for (const auto& g : s.scheduling_gates())
      gates.push_back({{"name", g.name()}});
  }
  if (s.volumes_size() > 0) {
    json& volumes = out["volumes"] = json::array();
    for (const k8s::Volume& v : s.volumes()) {
      json vol = {{"name", v.name()}};
      if (v.volume_source().has_persistent_volume_claim()) {
        vol["persistentVolumeClaim"] = {
            {"claimName",
             v.volume_source().persistent_volume_claim().claim_name()}};
      }
      if (v.volume_source().has_ephemeral()) vol["ephemeral"] = json::object();
      volumes.push_back(std::move(vol));
    }
  }
  if (s.resource_claims_size() > 0) {
    json& claims = out["resourceClaims"] = json::array();
    for (const auto& c : s.resource_claims())
      claims.push_back({{"name", c.name()}});
  }
  return out;
}

json StatusJson(const k8s::Status& s) {
  json out = {{"kind", "Status"}, {"code", s.code()}};
  if (s.has_status()) out["status"] = s.status();
  if (s.has_message()) out["message"] = s.message();
  if (s.has_reason()) out["reason"] = s.reason();
  return out;
}

template <typename Message>
absl::Status Parse(absl::string_view bytes, const char* what, Message* out) {
  if (!out->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a protobuf ", what, " (", bytes.size(), " bytes)"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<json> PodProtoToJson(absl::string_view raw) {
  k8s::Pod pod;
  if (absl::Status s = Parse(raw, "Pod", &pod); !s.ok()) return s;
  json out = {{"metadata", Meta(pod.metadata())}};
  if (pod.has_spec()) out["spec"] = SpecJson(pod.spec());
  if (pod.has_status()) {
    json status = json::object();
    if (pod.status().has_phase()) status["phase"] = pod.status().phase();
    if (pod.status().conditions_size() > 0) {
      json& conds = status["conditions"] = json::array();
      for (const k8s::PodCondition& c : pod.status().conditions()) {
        json cond = {{"type", c.type()}, {"status", c.status()}};
        if (c.has_message()) cond["message"] = c.message();
        conds.push_back(std::move(cond));
      }
    }
    out["status"] = std::move(status);
  }
  return out;
}

absl::StatusOr<json> NodeProtoToJson(absl::string_view raw) {
  k8s::Node node;
  if (absl::Status s = Parse(raw, "Node", &node); !s.ok()) return s;
  json out = {{"metadata", Meta(node.metadata())}};
  json spec = json::object();
  if (node.spec().has_unschedulable())
    spec["unschedulable"] = node.spec().unschedulable();
  if (node.spec().taints_size() > 0) {
    json& taints = spec["taints"] = json::array();
    for (const k8s::Taint& t : node.spec().taints()) {
      json taint = {{"key", t.key()}, {"effect", t.effect()}};
      if (t.has_value()) taint["value"] = t.value();
      taints.push_back(std::move(taint));
    }
  }
  out["spec"] = std::move(spec);
  if (!node.status().allocatable().empty()) {
    out["status"] = {{"allocatable", Quantities(node.status().allocatable())}};
  }
  return out;
}

bool IsProtobufEnvelope(absl::string_view body) {
  return body.substr(0, kMagic.size()) == kMagic;
}

std::string Wrap(absl::string_view raw, absl::string_view api_version,
                 absl::string_view kind) {
  k8s::Unknown u;
  u.mutable_type_meta()->set_api_version(std::string(api_version));
  u.mutable_type_meta()->set_kind(std::string(kind));
  u.set_raw(std::string(raw));
  std::string out(kMagic);
  u.AppendToString(&out);
  return out;
}

absl::StatusOr<std::string> Unwrap(absl::string_view body) {
  if (!IsProtobufEnvelope(body)) {
    return absl::InvalidArgumentError(
        "not a Kubernetes protobuf envelope (no k8s\\0 magic)");
  }
  k8s::Unknown unknown;
  if (absl::Status s = Parse(body.substr(kMagic.size()), "envelope", &unknown);
      !s.ok())
    return s;
  if (!unknown.content_encoding().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "protobuf envelope with content encoding \"",
        unknown.content_encoding(), "\", which the shim does not read"));
  }
  return std::move(*unknown.mutable_raw());
}

absl::StatusOr<DecodedList> DecodeList(absl::string_view body,
                                       const ObjectDecoder& decode) {
  absl::StatusOr<std::string> raw = Unwrap(body);
  if (!raw.ok()) return raw.status();
  k8s::List list;
  if (absl::Status s = Parse(*raw, "list", &list); !s.ok()) return s;
  DecodedList out;
  out.resource_version = list.metadata().resource_version();
  out.continue_token = list.metadata().continue_();
  out.items.reserve(static_cast<size_t>(list.items_size()));
  for (const std::string& item : list.items()) {
    absl::StatusOr<json> obj = decode(item);
    if (!obj.ok()) return obj.status();
    out.items.push_back(*std::move(obj));
  }
  return out;
}

absl::StatusOr<WatchEvent> DecodeWatchFrame(absl::string_view frame,
                                            const ObjectDecoder& decode) {
  k8s::WatchEvent ev;
  if (absl::Status s = Parse(frame, "watch event", &ev); !s.ok()) return s;
  absl::StatusOr<WatchEvent::Type> type = WatchEventTypeOf(ev.type());
  if (!type.ok()) return type.status();
  WatchEvent out;
  out.type = *type;
  absl::string_view raw = ev.object().raw();
  std::string unwrapped;
  if (IsProtobufEnvelope(raw)) {
    absl::StatusOr<std::string> inner = Unwrap(raw);
    if (!inner.ok()) return inner.status();
    unwrapped = *std::move(inner);
    raw = unwrapped;
  }
  if (out.type == WatchEvent::Type::kError) {
    k8s::Status status;
    if (absl::Status s = Parse(raw, "Status", &status); !s.ok()) return s;
    out.object = StatusJson(status);
    return out;
  }
  absl::StatusOr<json> obj = decode(raw);
  if (!obj.ok()) return obj.status();
  out.object = *std::move(obj);
  return out;
}

std::string ErrorBodyText(absl::string_view body) {
  if (!IsProtobufEnvelope(body)) return std::string(body);
  absl::StatusOr<std::string> raw = Unwrap(body);
  k8s::Status status;
  if (!raw.ok() || !status.ParseFromString(*raw)) {
    return "(undecodable protobuf error body)";
  }
  return StatusJson(status).dump();
}

}  // namespace kscore::kube
