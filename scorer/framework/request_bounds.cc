#include "scorer/framework/request_bounds.h"

#include "absl/strings/str_cat.h"
#include "model/saturating.h"

namespace kscore::framework {

int64_t NodesWork(const pb::Pod& pod, absl::Span<const pb::Node* const> nodes) {
  int64_t passes = 0;
  for (const pb::Node* n : nodes) {
    passes = model::SatAdd(passes, 1 + int64_t{n->taints_size()});
  }
  return model::SatMul(static_cast<int64_t>(pod.ByteSizeLong()), passes);
}

int64_t PreemptWork(const pb::PreemptRequest& req) {
  int64_t budgets = 0;
  for (const pb::DisruptionBudget& pdb : req.pdbs()) {
    budgets = model::SatAdd(budgets, static_cast<int64_t>(pdb.ByteSizeLong()));
  }
  const int64_t per_victim = model::SatAdd(
      model::SatAdd(static_cast<int64_t>(req.pod().ByteSizeLong()),
                    static_cast<int64_t>(req.cluster().ByteSizeLong())),
      budgets);
  int64_t victims = 0;
  int64_t ports = 0;
  for (const pb::PreemptionNode& n : req.nodes()) {
    victims = model::SatAdd(victims, n.pods_size());
    int64_t victim_ports = 0;
    for (const pb::VictimPod& p : n.pods()) victim_ports += p.ports_size();
    ports = model::SatAdd(
        ports, model::SatMul(victim_ports, 1 + n.node().used_ports_size()));
  }
  return model::SatAdd(model::SatMul(victims, per_victim), ports);
}

int64_t HintWork(const pb::QueueingHintRequest& req) {
  int64_t passes =
      1 + int64_t{req.old_node().taints_size()} + req.new_node().taints_size();
  for (const pb::Pod* p : {&req.old_pod(), &req.new_pod()}) {
    for (const auto* list : {&p->containers(), &p->init_containers()}) {
      for (const pb::Container& c : *list) passes += c.ports_size();
    }
  }
  int64_t pods = 0;
  for (const pb::HintQuery& q : req.queries()) {
    pods = model::SatAdd(pods, static_cast<int64_t>(q.pod().ByteSizeLong()));
  }
  return model::SatMul(pods, passes);
}

absl::Status CheckWork(int64_t work, int64_t max_work, absl::string_view field,
                       absl::string_view what, absl::string_view limit,
                       absl::string_view advice) {
  if (work <= max_work) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      field, ": the call would read about ", work, " bytes (", what,
      "), more than the limit of ", max_work, " (", limit, "); ", advice));
}

}  // namespace kscore::framework
