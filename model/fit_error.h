#ifndef KSCORE_MODEL_FIT_ERROR_H_
#define KSCORE_MODEL_FIT_ERROR_H_

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"

namespace kscore::model {

// Builds kube-scheduler's FitError message from the filter reasons of every
// rejected node, so events read the same as upstream's:
//   "0/3 nodes are available: 1 node(s) were unschedulable, 2 Insufficient
//   cpu."
class FitErrorBuilder {
 public:
  explicit FitErrorBuilder(int num_all_nodes) : num_all_nodes_(num_all_nodes) {}

  // A reason of one rejected node (call once per reason per node), or of
  // `nodes` nodes at once.
  void AddReason(absl::string_view reason, int nodes = 1) {
    reasons_[reason] += nodes;
  }
  // A PreFilter rejection replaces the per-node reasons.
  void SetPreFilterMessage(std::string msg) {
    pre_filter_msg_ = std::move(msg);
  }

  std::string Message() const;
  // What Message() sums up: each reason and its node count; PreFilter's
  // message ("" unless PreFilter rejected the pod).
  const absl::flat_hash_map<std::string, int>& reasons() const {
    return reasons_;
  }
  const std::string& pre_filter_message() const { return pre_filter_msg_; }

 private:
  int num_all_nodes_;
  std::string pre_filter_msg_;
  absl::flat_hash_map<std::string, int> reasons_;
};

}  // namespace kscore::model

#endif  // KSCORE_MODEL_FIT_ERROR_H_
