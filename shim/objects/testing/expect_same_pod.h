#ifndef KSCORE_SHIM_OBJECTS_TESTING_EXPECT_SAME_POD_H_
#define KSCORE_SHIM_OBJECTS_TESTING_EXPECT_SAME_POD_H_

#include <optional>
#include <vector>

#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "shim/objects/objects.h"

namespace kscore::objects {

// Test helpers: what the shim makes of a pod read in JSON (j) and of the
// same pod read in protobuf (p) is the same, field for field.
inline void ExpectSameList(const std::optional<pb::Resources>& j,
                           const std::optional<pb::Resources>& p) {
  ASSERT_EQ(j.has_value(), p.has_value());
  if (j.has_value()) {
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*j, *p))
        << j->DebugString() << " vs " << p->DebugString();
  }
}

inline void ExpectSameStatuses(
    const std::vector<model::PodResourceStatus::Container>& j,
    const std::vector<model::PodResourceStatus::Container>& p) {
  ASSERT_EQ(j.size(), p.size());
  for (size_t i = 0; i < j.size(); ++i) {
    ExpectSameList(j[i].allocated, p[i].allocated);
    ExpectSameList(j[i].actuated, p[i].actuated);
  }
}

inline void ExpectSamePod(const PodInfo& j, const PodInfo& p) {
  EXPECT_EQ(j.key, p.key);
  EXPECT_EQ(j.namespace_, p.namespace_);
  EXPECT_EQ(j.name, p.name);
  EXPECT_EQ(j.uid, p.uid);
  EXPECT_EQ(j.resource_version, p.resource_version);
  EXPECT_EQ(j.scheduler_name, p.scheduler_name);
  EXPECT_EQ(j.node_name, p.node_name);
  EXPECT_EQ(j.phase, p.phase);
  EXPECT_EQ(j.deleting, p.deleting);
  EXPECT_EQ(j.gated, p.gated);
  EXPECT_EQ(j.priority, p.priority);
  EXPECT_EQ(j.created, p.created);
  EXPECT_EQ(j.unschedulable_message, p.unschedulable_message);
  EXPECT_EQ(j.nominated_node_name, p.nominated_node_name);
  EXPECT_EQ(j.start_time, p.start_time);
  EXPECT_EQ(j.preempted_by_scheduler, p.preempted_by_scheduler);
  EXPECT_EQ(j.invalid, p.invalid);
  EXPECT_EQ(j.controller_api_version, p.controller_api_version);
  EXPECT_EQ(j.controller_kind, p.controller_kind);
  EXPECT_EQ(j.controller_name, p.controller_name);
  EXPECT_EQ(j.controller_uid, p.controller_uid);
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(j.pod, p.pod))
      << "JSON: " << j.pod.DebugString()
      << "\nprotobuf: " << p.pod.DebugString();
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(j.requests,
                                                                 p.requests))
      << j.requests.DebugString() << " vs " << p.requests.DebugString();
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(j.non_zero,
                                                                 p.non_zero));
  EXPECT_EQ(j.container_names, p.container_names);
  ASSERT_EQ(j.container_statuses.size(), p.container_statuses.size());
  for (size_t i = 0; i < j.container_statuses.size(); ++i) {
    EXPECT_EQ(j.container_statuses[i].name, p.container_statuses[i].name);
    ExpectSameStatuses({j.container_statuses[i].resources},
                       {p.container_statuses[i].resources});
  }
  const model::PodResourceStatus& js = j.resource_status;
  const model::PodResourceStatus& ps = p.resource_status;
  ExpectSameStatuses(js.containers, ps.containers);
  ExpectSameStatuses(js.init_containers, ps.init_containers);
  ExpectSameList(js.allocated, ps.allocated);
  EXPECT_EQ(js.has_resources, ps.has_resources);
  ExpectSameList(js.actuated, ps.actuated);
  EXPECT_EQ(js.resize_infeasible, ps.resize_infeasible);
  ASSERT_EQ(j.host_ports.size(), p.host_ports.size());
  for (size_t i = 0; i < j.host_ports.size(); ++i) {
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(
        j.host_ports[i], p.host_ports[i]));
  }
}

}  // namespace kscore::objects

#endif  // KSCORE_SHIM_OBJECTS_TESTING_EXPECT_SAME_POD_H_
