#ifndef KSCORE_SHIM_KUBE_INFORMER_H_
#define KSCORE_SHIM_KUBE_INFORMER_H_

#include <atomic>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "nlohmann/json.hpp"
#include "shim/kube/client.h"
#include "shim/kube/protobuf_codec.h"
#include "shim/kube/store.h"

namespace kscore::kube {

// Called from the informer's thread, one at a time, in order. Any may be
// empty.
struct EventHandlers {
  std::function<void(const nlohmann::json& obj)> on_add;
  std::function<void(const nlohmann::json& old_obj,
                     const nlohmann::json& new_obj)>
      on_update;
  std::function<void(const nlohmann::json& last_known)> on_delete;
  // Once, after the first list has been delivered.
  std::function<void()> on_synced;
};

struct InformerOptions {
  std::string path;  // a collection, e.g. "/api/v1/pods"
  std::string field_selector;
  std::string label_selector;
  EventHandlers handlers;
  // What the informer's store keeps of each object (see Projection); by
  // default all of it. List() and Get() return what is kept.
  Projection keep;
  // Watch timeoutSeconds; zero picks 5-10 min at random per watch, as
  // client-go does, so that informers do not all re-watch at once.
  absl::Duration watch_timeout = absl::ZeroDuration();
  // When set, lists and watches ask for the protobuf encoding (as
  // kube-scheduler's clients do) and each object goes through this decoder
  // (e.g. PodProtoToJson); a list answered in JSON is still read. Unset:
  // JSON throughout.
  ObjectDecoder protobuf;
};

// What the informer does after a watch ends (a pure function, for tests):
// 410 Gone relists at once; a watch that delivered events or ran a while is
// resumed at once; HTTP errors relist and network errors re-watch, both
// after a backoff.
enum class NextStep { kRewatch, kRelist, kBackoffRewatch, kBackoffRelist };
NextStep AfterWatch(const absl::Status& watch_status, bool progressed);

// The status carried by an ERROR watch event's object (a metav1.Status), as a
// HttpError with its code.
absl::Status WatchErrorStatus(const nlohmann::json& status_object);

// client-go's reflector + store: LIST (paged), then WATCH from the list's
// resourceVersion with bookmarks; re-watch when the server ends the stream,
// relist on 410 Gone (deletions missed meanwhile become on_delete), back off
// exponentially on errors. One thread; Start once, Stop joins promptly.
class Informer {
 public:
  Informer(Client* client, InformerOptions options);
  ~Informer();
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  void Start();
  void Stop();
  bool HasSynced() const { return synced_.load(); }

  std::vector<ObjectPtr> List() const;
  ObjectPtr Get(absl::string_view key) const;  // "namespace/name" or "name"
  std::string ResourceVersion() const;
  int lists() const { return lists_.load(); }      // full lists so far
  int watches() const { return watches_.load(); }  // watches ended so far

 private:
  void Run();
  absl::Status ListAll();
  // One page of a list (protobuf or JSON) appended to items; its
  // resourceVersion and continue token.
  absl::Status ReadPage(const std::string& query, const std::string& body,
                        std::vector<nlohmann::json>* items, std::string* rv,
                        std::string* cont) const;
  // OK when the server ended the stream; a HttpError(410) when it is time
  // to relist.
  absl::Status Watch(bool* got_events);
  void Dispatch(const std::vector<Delta>& deltas);
  std::string Query(absl::string_view extra) const;

  Client* const client_;
  const InformerOptions options_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> synced_{false};
  std::atomic<int> lists_{0};
  std::atomic<int> watches_{0};
  absl::Notification stopping_;  // wakes backoff sleeps
  std::thread thread_;
  std::mt19937_64 rng_{std::random_device{}()};  // informer thread only

  mutable absl::Mutex mu_;
  Store store_ ABSL_GUARDED_BY(mu_){options_.keep};
  std::string resource_version_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kscore::kube

#endif  // KSCORE_SHIM_KUBE_INFORMER_H_
