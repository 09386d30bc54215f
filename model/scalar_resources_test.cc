#include "model/scalar_resources.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace kscore::model {
namespace {

namespace pb = ::kscore::scorer::v1;

TEST(ScalarResourcesTest, ReadWriteRemoveByName) {
  pb::Resources r;
  EXPECT_EQ(ScalarValue(r, "example.com/gpu"), 0);
  MutableScalar(&r, "example.com/gpu")->set_value(2);
  MutableScalar(&r, "hugepages-2Mi")->set_value(1 << 21);
  EXPECT_EQ(AddToScalar(&r, "example.com/gpu", 3), 5);
  EXPECT_EQ(AddToScalar(&r, "example.com/fpga", 1), 1);
  RemoveScalar(&r, "example.com/fpga");
  EXPECT_EQ(r.scalar_size(), 2);
  EXPECT_EQ(ScalarValue(r, "example.com/gpu"), 5);
  EXPECT_EQ(ScalarValue(r, "hugepages-2Mi"), 1 << 21);
  RemoveScalar(&r, "example.com/gpu");
  RemoveScalar(&r, "example.com/none");
  ASSERT_EQ(r.scalar_size(), 1);
  EXPECT_EQ(r.scalar(0).name(), "hugepages-2Mi");
  EXPECT_EQ(CheckScalars(r), "");
}

TEST(ScalarResourcesTest, CheckNamesTheRepeatedOrUnnamedEntry) {
  pb::Resources r;
  MutableScalar(&r, "a/x")->set_value(1);
  MutableScalar(&r, "a/y")->set_value(1);
  pb::ScalarResource* again = r.add_scalar();
  again->set_name("a/x");
  EXPECT_EQ(CheckScalars(r), "scalar[2]: duplicate \"a/x\" (also scalar[0])");
  again->clear_name();
  EXPECT_EQ(CheckScalars(r), "scalar[2].name is required");
}

}  // namespace
}  // namespace kscore::model
