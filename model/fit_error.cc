#include "model/fit_error.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace kscore::model {

std::string FitErrorBuilder::Message() const {
  std::string msg = absl::StrCat("0/", num_all_nodes_, " nodes are available:");
  if (!pre_filter_msg_.empty())
    return absl::StrCat(msg, " ", pre_filter_msg_, ".");
  std::vector<std::string> histogram;
  histogram.reserve(reasons_.size());
  for (const auto& [reason, count] : reasons_) {
    histogram.push_back(absl::StrCat(count, " ", reason));
  }
  // Upstream sorts the "N reason" strings as strings (so "10 x" < "2 y").
  std::sort(histogram.begin(), histogram.end());
  if (!histogram.empty()) {
    absl::StrAppend(&msg, " ", absl::StrJoin(histogram, ", "), ".");
  }
  return msg;
}

}  // namespace kscore::model
