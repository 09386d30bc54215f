#ifndef KSCORE_SCORER_TESTING_PROFILE_PEER_H_
#define KSCORE_SCORER_TESTING_PROFILE_PEER_H_

#include <string>
#include <vector>

#include "model/config.h"
#include "scorer/framework/profile.h"

namespace kscore::framework {

// Tests' view of a Profile's plugin lists. Profile::Describe lists each
// plugin once, where it first appears; tests of the order kube-scheduler
// runs a point's plugins in read the list itself.
class ProfilePeer {
 public:
  // The plugin names at one of the points the scorer runs (PreFilter,
  // Filter, PreScore, Score, PostFilter), in run order; none at another.
  static std::vector<std::string> PluginNames(const Profile& p,
                                              model::ExtensionPoint point) {
    switch (point) {
      case model::ExtensionPoint::kPreFilter:
        return Names(p.pre_filter_);
      case model::ExtensionPoint::kFilter:
        return Names(p.filter_);
      case model::ExtensionPoint::kPreScore:
        return Names(p.pre_score_);
      case model::ExtensionPoint::kScore:
        return Names(p.score_);
      case model::ExtensionPoint::kPostFilter:
        return Names(p.post_filter_);
      default:
        return {};
    }
  }

 private:
  template <typename List>
  static std::vector<std::string> Names(const List& list) {
    std::vector<std::string> out;
    for (const auto* plugin : list) out.emplace_back(plugin->Name());
    return out;
  }
};

}  // namespace kscore::framework

#endif  // KSCORE_SCORER_TESTING_PROFILE_PEER_H_
