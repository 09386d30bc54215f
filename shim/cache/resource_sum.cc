#include "shim/cache/resource_sum.h"

#include "model/saturating.h"

namespace kscore::cache {

void ResourceSum::Apply(const pb::Resources& r, int sign) {
  milli_cpu_ += sign * static_cast<__int128>(r.milli_cpu());
  memory_ += sign * static_cast<__int128>(r.memory());
  ephemeral_storage_ += sign * static_cast<__int128>(r.ephemeral_storage());
  for (const pb::ScalarResource& s : r.scalar()) {
    const __int128 delta = sign * static_cast<__int128>(s.value());
    auto it = scalar_.begin();
    while (it != scalar_.end() && it->first != s.name()) ++it;
    if (it == scalar_.end()) {
      if (delta != 0) scalar_.emplace_back(s.name(), delta);
      continue;
    }
    it->second += delta;
    if (it->second == 0) scalar_.erase(it);
  }
}

pb::Resources ResourceSum::ToProto() const {
  pb::Resources out;
  if (milli_cpu_ != 0) out.set_milli_cpu(model::Clamp128(milli_cpu_));
  if (memory_ != 0) out.set_memory(model::Clamp128(memory_));
  out.set_ephemeral_storage(model::Clamp128(ephemeral_storage_));
  for (const auto& [name, v] : scalar_) {
    pb::ScalarResource* s = out.add_scalar();
    s->set_name(name);
    s->set_value(model::Clamp128(v));
  }
  return out;
}

}  // namespace kscore::cache
