#include "model/session_cluster.h"

#include <algorithm>

#include "model/node_key.h"

namespace kscore::model {

pb::ClusterData SessionCluster(const pb::ClusterData& cluster) {
  pb::ClusterData out = cluster;
  for (pb::QueryAnswer& a : *out.mutable_answers())
    a.set_total(std::clamp<int64_t>(a.total(), 0, 1));
  for (pb::ExistingTerm& e : *out.mutable_existing_terms())
    e.set_total(std::clamp<int64_t>(e.total(), 0, 1));
  return out;
}

void AppendSessionCluster(const pb::ClusterData& cluster, std::string* out) {
  AppendDeterministic(SessionCluster(cluster), out);
}

}  // namespace kscore::model
