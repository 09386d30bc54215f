#ifndef KSCORE_SCORER_TESTING_WRAPPERS_H_
#define KSCORE_SCORER_TESTING_WRAPPERS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kscore/scorer/v1/scorer.pb.h"
#include "model/cluster_event.h"
#include "model/scalar_resources.h"

// Fixture builders in the style of kube-scheduler's st.MakePod():
//   MakePod().Name("p").Label("app", "web").Req(500, 1 << 30).Obj()
namespace kscore::testing {

namespace pb = ::kscore::scorer::v1;

// cpu and memory as a resource list: a 0 is left out (absent).
inline pb::Resources Amounts(int64_t milli_cpu, int64_t memory) {
  pb::Resources r;
  if (milli_cpu != 0) r.set_milli_cpu(milli_cpu);
  if (memory != 0) r.set_memory(memory);
  return r;
}

class PodWrapper {
 public:
  PodWrapper() {
    pod_.set_namespace_("default");
    pod_.set_name("pod");
  }
  PodWrapper& Name(std::string n) {
    pod_.set_name(std::move(n));
    return *this;
  }
  PodWrapper& Namespace(std::string n) {
    pod_.set_namespace_(std::move(n));
    return *this;
  }
  PodWrapper& UID(std::string u) {
    pod_.set_uid(std::move(u));
    return *this;
  }
  PodWrapper& Label(const std::string& k, const std::string& v) {
    (*pod_.mutable_labels())[k] = v;
    return *this;
  }
  PodWrapper& NodeName(std::string n) {
    pod_.set_node_name(std::move(n));
    return *this;
  }
  PodWrapper& NodeSelector(const std::string& k, const std::string& v) {
    (*pod_.mutable_node_selector())[k] = v;
    return *this;
  }
  PodWrapper& Toleration(std::string key, std::string op, std::string value,
                         std::string effect) {
    pb::Toleration* t = pod_.add_tolerations();
    t->set_key(std::move(key));
    t->set_operator_(std::move(op));
    t->set_value(std::move(value));
    t->set_effect(std::move(effect));
    return *this;
  }
  // A container requesting milli_cpu and memory bytes; a 0 is a request
  // left out (ReqList sets an explicit zero).
  PodWrapper& Req(int64_t milli_cpu, int64_t memory) {
    return ReqList(Amounts(milli_cpu, memory));
  }
  PodWrapper& InitReq(int64_t milli_cpu, int64_t memory,
                      std::string restart_policy = "") {
    return InitReqList(Amounts(milli_cpu, memory), std::move(restart_policy));
  }
  // A container whose requests are exactly `requests`.
  PodWrapper& ReqList(pb::Resources requests) {
    *pod_.add_containers()->mutable_requests() = std::move(requests);
    return *this;
  }
  PodWrapper& InitReqList(pb::Resources requests,
                          std::string restart_policy = "") {
    pb::Container* c = pod_.add_init_containers();
    *c->mutable_requests() = std::move(requests);
    c->set_restart_policy(std::move(restart_policy));
    return *this;
  }
  // spec.resources.requests (pod-level).
  PodWrapper& PodLevelReq(pb::Resources requests) {
    *pod_.mutable_pod_level_requests() = std::move(requests);
    return *this;
  }
  PodWrapper& ScalarReq(const std::string& name, int64_t v) {
    if (pod_.containers_size() == 0) pod_.add_containers();
    model::MutableScalar(
        pod_.mutable_containers(pod_.containers_size() - 1)->mutable_requests(),
        name)
        ->set_value(v);
    return *this;
  }
  PodWrapper& HostPort(int32_t port, std::string protocol = "TCP",
                       std::string host_ip = "") {
    if (pod_.containers_size() == 0) pod_.add_containers();
    pb::ContainerPort* p =
        pod_.mutable_containers(pod_.containers_size() - 1)->add_ports();
    p->set_host_port(port);
    p->set_protocol(std::move(protocol));
    p->set_host_ip(std::move(host_ip));
    return *this;
  }
  PodWrapper& Overhead(int64_t milli_cpu, int64_t memory) {
    *pod_.mutable_overhead() = Amounts(milli_cpu, memory);
    return *this;
  }
  // Ephemeral storage request on the last container (added if none).
  PodWrapper& EphemeralReq(int64_t bytes) {
    if (pod_.containers_size() == 0) pod_.add_containers();
    pod_.mutable_containers(pod_.containers_size() - 1)
        ->mutable_requests()
        ->set_ephemeral_storage(bytes);
    return *this;
  }
  // Scalar request on the last init container (added if none).
  PodWrapper& InitScalarReq(const std::string& name, int64_t v) {
    if (pod_.init_containers_size() == 0) pod_.add_init_containers();
    model::MutableScalar(
        pod_.mutable_init_containers(pod_.init_containers_size() - 1)
            ->mutable_requests(),
        name)
        ->set_value(v);
    return *this;
  }
  // Host port on the last init container (added if none).
  PodWrapper& InitHostPort(int32_t port, std::string protocol = "TCP",
                           std::string host_ip = "") {
    if (pod_.init_containers_size() == 0) pod_.add_init_containers();
    pb::ContainerPort* p =
        pod_.mutable_init_containers(pod_.init_containers_size() - 1)
            ->add_ports();
    p->set_host_port(port);
    p->set_protocol(std::move(protocol));
    p->set_host_ip(std::move(host_ip));
    return *this;
  }
  // requiredDuringScheduling...nodeSelectorTerms: marks required as set; each
  // call adds one (ORed) term. Requirements are ANDed within the term.
  PodWrapper& RequiredTerm(
      std::vector<pb::NodeSelectorRequirement> exprs,
      std::vector<pb::NodeSelectorRequirement> fields = {}) {
    pb::NodeAffinity* a = pod_.mutable_node_affinity();
    a->set_has_required(true);
    *a->add_required() = Term(std::move(exprs), std::move(fields));
    return *this;
  }
  // Required node affinity with no terms (matches no node).
  PodWrapper& RequiredNoTerms() {
    pod_.mutable_node_affinity()->set_has_required(true);
    return *this;
  }
  PodWrapper& PreferredTerm(
      int32_t weight, std::vector<pb::NodeSelectorRequirement> exprs,
      std::vector<pb::NodeSelectorRequirement> fields = {}) {
    pb::PreferredSchedulingTerm* t =
        pod_.mutable_node_affinity()->add_preferred();
    t->set_weight(weight);
    *t->mutable_preference() = Term(std::move(exprs), std::move(fields));
    return *this;
  }
  pb::NodeAffinity* mutable_affinity() { return pod_.mutable_node_affinity(); }
  pb::Pod Obj() const { return pod_; }

 private:
  static pb::NodeSelectorTerm Term(
      std::vector<pb::NodeSelectorRequirement> exprs,
      std::vector<pb::NodeSelectorRequirement> fields) {
    pb::NodeSelectorTerm t;
    for (auto& e : exprs) *t.add_match_expressions() = std::move(e);
    for (auto& f : fields) *t.add_match_fields() = std::move(f);
    return t;
  }

  pb::Pod pod_;
};

// A node selector requirement: Req("zone", "In", {"a", "b"}).
inline pb::NodeSelectorRequirement Req(std::string key, std::string op,
                                       std::vector<std::string> values = {}) {
  pb::NodeSelectorRequirement r;
  r.set_key(std::move(key));
  r.set_operator_(std::move(op));
  for (auto& v : values) r.add_values(std::move(v));
  return r;
}

class NodeWrapper {
 public:
  NodeWrapper() {
    node_.set_name("node");
    // kube-scheduler's test default: roomy enough for any test pod.
    Capacity(4000, int64_t{16} << 30, 110);
  }
  NodeWrapper& Name(std::string n) {
    node_.set_name(std::move(n));
    return *this;
  }
  NodeWrapper& Label(const std::string& k, const std::string& v) {
    (*node_.mutable_labels())[k] = v;
    return *this;
  }
  NodeWrapper& Taint(std::string key, std::string value, std::string effect) {
    pb::Taint* t = node_.add_taints();
    t->set_key(std::move(key));
    t->set_value(std::move(value));
    t->set_effect(std::move(effect));
    return *this;
  }
  NodeWrapper& Unschedulable(bool u = true) {
    node_.set_unschedulable(u);
    return *this;
  }
  NodeWrapper& Capacity(int64_t milli_cpu, int64_t memory, int64_t pods) {
    node_.mutable_allocatable()->set_milli_cpu(milli_cpu);
    node_.mutable_allocatable()->set_memory(memory);
    node_.mutable_allocatable()->set_pods(pods);
    return *this;
  }
  NodeWrapper& ScalarCapacity(const std::string& name, int64_t v) {
    model::MutableScalar(node_.mutable_allocatable(), name)->set_value(v);
    return *this;
  }
  NodeWrapper& Requested(int64_t milli_cpu, int64_t memory) {
    node_.mutable_requested()->set_milli_cpu(milli_cpu);
    node_.mutable_requested()->set_memory(memory);
    node_.mutable_non_zero_requested()->set_milli_cpu(milli_cpu);
    node_.mutable_non_zero_requested()->set_memory(memory);
    return *this;
  }
  // Requested (actual) only, leaving non_zero_requested alone.
  NodeWrapper& RequestedOnly(int64_t milli_cpu, int64_t memory) {
    node_.mutable_requested()->set_milli_cpu(milli_cpu);
    node_.mutable_requested()->set_memory(memory);
    return *this;
  }
  NodeWrapper& NonZeroRequested(int64_t milli_cpu, int64_t memory) {
    node_.mutable_non_zero_requested()->set_milli_cpu(milli_cpu);
    node_.mutable_non_zero_requested()->set_memory(memory);
    return *this;
  }
  NodeWrapper& EphemeralCapacity(int64_t bytes) {
    node_.mutable_allocatable()->set_ephemeral_storage(bytes);
    return *this;
  }
  NodeWrapper& EphemeralRequested(int64_t bytes) {
    node_.mutable_requested()->set_ephemeral_storage(bytes);
    node_.mutable_non_zero_requested()->set_ephemeral_storage(bytes);
    return *this;
  }
  NodeWrapper& ScalarRequested(const std::string& name, int64_t v) {
    model::MutableScalar(node_.mutable_requested(), name)->set_value(v);
    model::MutableScalar(node_.mutable_non_zero_requested(), name)
        ->set_value(v);
    return *this;
  }
  NodeWrapper& PodCount(int32_t n) {
    node_.set_pod_count(n);
    return *this;
  }
  NodeWrapper& UsedPort(int32_t port, std::string protocol = "TCP",
                        std::string host_ip = "") {
    pb::HostPort* p = node_.add_used_ports();
    p->set_port(port);
    p->set_protocol(std::move(protocol));
    p->set_host_ip(std::move(host_ip));
    return *this;
  }
  NodeWrapper& LabelCount(std::string key, std::string value, int64_t count) {
    pb::LabelCount* lc = node_.add_label_counts();
    lc->set_key(std::move(key));
    lc->set_value(std::move(value));
    lc->set_count(count);
    return *this;
  }
  pb::Node Obj() const { return node_; }

 private:
  pb::Node node_;
};

inline PodWrapper MakePod() { return PodWrapper(); }
inline NodeWrapper MakeNode() { return NodeWrapper(); }

// A cluster event as a plugin's Hint sees it: one action bit and the
// objects before and after (null when absent), which the caller keeps.
inline model::EventObjects NodeEvent(uint32_t action, const pb::Node* old_node,
                                     const pb::Node* new_node) {
  model::EventObjects e;
  e.event = model::MakeEvent(pb::EVENT_RESOURCE_NODE, action);
  e.old_node = old_node;
  e.new_node = new_node;
  return e;
}
inline model::EventObjects AssignedPodDelete(const pb::Pod* deleted) {
  model::EventObjects e;
  e.event =
      model::MakeEvent(pb::EVENT_RESOURCE_ASSIGNED_POD, model::action::kDelete);
  e.old_pod = deleted;
  return e;
}

}  // namespace kscore::testing

#endif  // KSCORE_SCORER_TESTING_WRAPPERS_H_
