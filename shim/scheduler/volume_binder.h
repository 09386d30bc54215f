#ifndef KSCORE_SHIM_SCHEDULER_VOLUME_BINDER_H_
#define KSCORE_SHIM_SCHEDULER_VOLUME_BINDER_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "shim/cache/volumes.h"
#include "shim/objects/objects.h"
#include "shim/scheduler/writer.h"

namespace kscore::scheduler {

// VolumeBinding's PreBind, as upstream's BindPodVolumes: writes what Reserve
// assumed (a volume's claimRef, a claim's selected node; merge patches with
// the resourceVersion assumed over, so a changed object is a conflict, never
// overwritten), then waits, bounded, for the PersistentVolume controller to
// bind every claim (cache::Volumes::Bound). The wait runs on its own thread:
// no scheduling worker blocks on it.
class VolumeBinder {
 public:
  struct Options {
    absl::Duration poll = absl::Milliseconds(100);
  };
  // OK once every claim is bound; otherwise upstream's error, after which
  // the reservation is forgotten.
  using Done = std::function<void(const absl::Status&)>;

  VolumeBinder(Writer* writer, cache::Volumes* volumes, Options options);
  VolumeBinder(Writer* writer, cache::Volumes* volumes)
      : VolumeBinder(writer, volumes, Options()) {}
  // Stop()s.
  ~VolumeBinder();
  // Ends the waits still running with Cancelled. The waiting thread starts
  // with the first PreBind.
  void Stop();

  // Waits at most `timeout` (the profile's volume_bind_timeout) for the PV
  // controller once the writes are in.
  void PreBind(const objects::PodInfo& pod, cache::Volumes::Reservation r,
               absl::Duration timeout, Done done);
  size_t waiting() const;

 private:
  struct Pending {
    std::string pod;  // namespace/name, for logs
    cache::Volumes::Reservation r;
    Done done;
    absl::Time deadline;
    int writes_left = 0;
    absl::Status write_error;
  };
  void Write(const std::shared_ptr<Pending>& p);
  void Written(const std::shared_ptr<Pending>& p, const std::string& what,
               const absl::StatusOr<kube::Response>& resp);
  void Finish(const std::shared_ptr<Pending>& p, const absl::Status& s);
  void Loop();
  // One pass over the waits: those that ended, with their outcome.
  std::vector<std::pair<std::shared_ptr<Pending>, absl::Status>> Due();

  Writer* writer_;
  cache::Volumes* volumes_;
  const Options options_;
  mutable absl::Mutex mu_;
  std::vector<std::shared_ptr<Pending>> waiting_ ABSL_GUARDED_BY(mu_);
  absl::Notification stop_;
  absl::Mutex thread_mu_;
  std::thread thread_ ABSL_GUARDED_BY(thread_mu_);
};

}  // namespace kscore::scheduler

#endif  // KSCORE_SHIM_SCHEDULER_VOLUME_BINDER_H_
