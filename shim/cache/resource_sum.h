#ifndef KSCORE_SHIM_CACHE_RESOURCE_SUM_H_
#define KSCORE_SHIM_CACHE_RESOURCE_SUM_H_

#include <string>
#include <utility>
#include <vector>

#include "kscore/scorer/v1/scorer.pb.h"

namespace kscore::cache {

namespace pb = ::kscore::scorer::v1;

// The requests of a node's pods, added up exactly in 128 bits (no number of
// pods overflows them) and sent saturated at the int64 limit. A sum kept in
// int64 would wrap into a small or negative request, and one saturated in
// int64 could not give a pod back: (MAX + x) - x is not what was there
// before x came.
class ResourceSum {
 public:
  void Add(const pb::Resources& r) { Apply(r, 1); }
  // Takes back what Add added (a pod's own requests).
  void Subtract(const pb::Resources& r) { Apply(r, -1); }

  // The sums as the scorer reads them, each clamped to int64: a cpu or
  // memory sum of zero is left unset and an extended resource summing to
  // zero left out, so an empty node's encoding stays short.
  pb::Resources ToProto() const;

 private:
  void Apply(const pb::Resources& r, int sign);

  __int128 milli_cpu_ = 0;
  __int128 memory_ = 0;
  __int128 ephemeral_storage_ = 0;
  // Extended resources in the order they first came (none sums to zero).
  std::vector<std::pair<std::string, __int128>> scalar_;
};

}  // namespace kscore::cache

#endif  // KSCORE_SHIM_CACHE_RESOURCE_SUM_H_
