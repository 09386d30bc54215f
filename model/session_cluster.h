#ifndef KSCORE_MODEL_SESSION_CLUSTER_H_
#define KSCORE_MODEL_SESSION_CLUSTER_H_

// What a kept session (pb::SessionUpdate) depends on of a cycle's cluster
// data. The plugins read ClusterData in PreFilter and PreScore only through
// node_count, each answer's domains and min_count, each existing term
// itself, and whether each total is zero; a node's own counts come with the
// node (Node.query_counts, Node.term_counts). So two cycles whose cluster
// data differ only in the totals' sizes decide alike on a node sent alike,
// and a session outlives bindings that change those sizes.

#include <string>

#include "kscore/scorer/v1/scorer.pb.h"

namespace kscore::model {

namespace pb = ::kscore::scorer::v1;

// `cluster` with every total (answers and existing terms) cut to 0 or 1.
pb::ClusterData SessionCluster(const pb::ClusterData& cluster);

// Its deterministic encoding, appended to `out`.
void AppendSessionCluster(const pb::ClusterData& cluster, std::string* out);

}  // namespace kscore::model

#endif  // KSCORE_MODEL_SESSION_CLUSTER_H_
