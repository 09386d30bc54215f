#include "model/fit_error.h"

#include "gtest/gtest.h"

namespace kscore::model {
namespace {

TEST(FitErrorTest, HistogramSortedAsStrings) {
  FitErrorBuilder b(3);
  for (int i = 0; i < 3; ++i) {
    b.AddReason("node(s) were rejected by Concentrate (rejectEverything)");
  }
  EXPECT_EQ(b.Message(),
            "0/3 nodes are available: 3 node(s) were rejected by Concentrate "
            "(rejectEverything).");
}

TEST(FitErrorTest, SeveralReasons) {
  FitErrorBuilder b(12);
  for (int i = 0; i < 10; ++i) b.AddReason("Insufficient cpu");
  b.AddReason("node(s) were unschedulable");
  b.AddReason("node(s) were unschedulable");
  EXPECT_EQ(b.Message(),
            "0/12 nodes are available: 10 Insufficient cpu, 2 node(s) were "
            "unschedulable.");
}

TEST(FitErrorTest, PreFilterMessageWins) {
  FitErrorBuilder b(3);
  b.AddReason("Insufficient cpu");
  b.SetPreFilterMessage("pod has unbound immediate PersistentVolumeClaims");
  EXPECT_EQ(b.Message(),
            "0/3 nodes are available: pod has unbound immediate "
            "PersistentVolumeClaims.");
}

TEST(FitErrorTest, NoNodes) {
  EXPECT_EQ(FitErrorBuilder(0).Message(), "0/0 nodes are available:");
}

}  // namespace
}  // namespace kscore::model
