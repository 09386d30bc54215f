#ifndef KSCORE_SHIM_KUBE_INFORMER_H_
#define KSCORE_SHIM_KUBE_INFORMER_H_

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "nlohmann/json.hpp"
#include "shim/kube/client.h"
#include "shim/kube/object_codec.h"
#include "shim/kube/protobuf_codec.h"
#include "shim/kube/store.h"

namespace kscore::kube {

// What the informer does after a watch ends (a pure function, for tests):
// 410 Gone relists at once; a watch that delivered events or ran a while is
// resumed at once; HTTP errors relist and network errors re-watch, both
// after a backoff.
enum class NextStep { kRewatch, kRelist, kBackoffRewatch, kBackoffRelist };
NextStep AfterWatch(const absl::Status& watch_status, bool progressed);

// The status carried by an ERROR watch event's object (a metav1.Status), as a
// HttpError with its code.
absl::Status WatchErrorStatus(const nlohmann::json& status_object);

// One object as read off the wire, not decoded yet: its protobuf bytes
// (without envelope) or its JSON.
struct WireObject {
  absl::string_view protobuf;
  const nlohmann::json* json = nullptr;  // set for JSON
};

// The typed half of an informer, as the reflector feeds it. Called from the
// reflector's thread only.
class ReflectorTarget {
 public:
  virtual ~ReflectorTarget() = default;
  // One item of a list page, decoded and held until EndList.
  virtual void Listed(const WireObject& item) = 0;
  // Drops the held items (a list starts, or starts over).
  virtual void DropListed() = 0;
  // The held items are the whole collection as of resource_version.
  virtual void EndList(std::string resource_version) = 0;
  // An ADDED, MODIFIED or DELETED event.
  virtual void Watched(WatchEvent::Type type, const WireObject& obj) = 0;
  // A BOOKMARK: the collection is unchanged up to resource_version.
  virtual void Bookmark(std::string resource_version) = 0;
  // Where the next watch starts.
  virtual std::string ResourceVersion() const = 0;
};

struct ReflectorOptions {
  std::string path;  // a collection, e.g. "/api/v1/pods"
  std::string field_selector;
  std::string label_selector;
  // Watch timeoutSeconds; zero picks 5-10 min at random per watch, as
  // client-go does, so that informers do not all re-watch at once.
  absl::Duration watch_timeout = absl::ZeroDuration();
  // Lists and watches ask for the protobuf encoding (as kube-scheduler's
  // clients do); a list answered in JSON is still read. Otherwise JSON.
  bool protobuf = false;
  // Once, after the first list has been delivered.
  std::function<void()> on_synced;
};

// client-go's reflector, without types: LIST (paged), then WATCH from the
// list's resourceVersion with bookmarks; re-watch when the server ends the
// stream, relist on 410 Gone, back off exponentially on errors. Objects go
// to the target still encoded. One thread; Start once, Stop joins promptly.
class Reflector {
 public:
  Reflector(Client* client, ReflectorOptions options, ReflectorTarget* target);
  ~Reflector();
  Reflector(const Reflector&) = delete;
  Reflector& operator=(const Reflector&) = delete;

  void Start();
  void Stop();
  bool HasSynced() const { return synced_.load(); }
  int lists() const { return lists_.load(); }      // full lists so far
  int watches() const { return watches_.load(); }  // watches ended so far
  const std::string& path() const { return options_.path; }

 private:
  void Run();
  absl::Status ListAll();
  // One page of a list (protobuf or JSON) to the target; its
  // resourceVersion and continue token.
  absl::Status ReadPage(const std::string& query, const std::string& body,
                        std::string* rv, std::string* cont);
  // OK when the server ended the stream; a HttpError(410) when it is time
  // to relist.
  absl::Status Watch(bool* got_events);
  // One watch event to the target; false (with *error set) ends the watch.
  bool OnEvent(absl::StatusOr<WatchEvent> event, absl::Status* error);
  std::string Query(absl::string_view extra) const;

  Client* const client_;
  const ReflectorOptions options_;
  ReflectorTarget* const target_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> synced_{false};
  std::atomic<int> lists_{0};
  std::atomic<int> watches_{0};
  absl::Notification stopping_;  // wakes backoff sleeps
  std::thread thread_;
  std::mt19937_64 rng_{std::random_device{}()};  // reflector thread only
};

// Logs an object the informer of `path` could not decode and skips it: one
// odd object must not stop the informer (a relist would meet it again).
void LogUndecodable(const std::string& path, const absl::Status& status);

// Called from the informer's thread, one at a time, in order. Any may be
// empty.
template <typename T>
struct EventHandlers {
  std::function<void(const Ptr<T>& obj)> on_add;
  std::function<void(const Ptr<T>& old_obj, const Ptr<T>& new_obj)> on_update;
  std::function<void(const Ptr<T>& last_known)> on_delete;
  // Once, after the first list has been delivered.
  std::function<void()> on_synced;
};

template <typename T>
struct InformerOptions {
  std::string path;  // a collection, e.g. "/api/v1/pods"
  std::string field_selector;
  std::string label_selector;
  EventHandlers<T> handlers;
  // Decodes each object once (from_protobuf is needed with `protobuf`) and
  // says what the store keeps; List() and Get() return what is kept.
  ObjectCodec<T> codec;
  absl::Duration watch_timeout = absl::ZeroDuration();  // see Reflector
  bool protobuf = false;                                // see Reflector
};

// A reflector and a Store<T>: objects are decoded into T once, as they come
// off the wire, and handlers get T.
template <typename T>
class Informer final : private ReflectorTarget {
 public:
  Informer(Client* client, InformerOptions<T> options)
      : options_(std::move(options)),
        store_(options_.codec.keep),
        reflector_(client,
                   {options_.path, options_.field_selector,
                    options_.label_selector, options_.watch_timeout,
                    options_.protobuf, options_.handlers.on_synced},
                   this) {}
  ~Informer() override { reflector_.Stop(); }

  void Start() { reflector_.Start(); }
  void Stop() { reflector_.Stop(); }
  bool HasSynced() const { return reflector_.HasSynced(); }
  int lists() const { return reflector_.lists(); }
  int watches() const { return reflector_.watches(); }

  std::vector<Ptr<T>> List() const {
    absl::MutexLock lock(&mu_);
    return store_.List();
  }
  Ptr<T> Get(absl::string_view key) const {  // Identity::key
    absl::MutexLock lock(&mu_);
    return store_.Get(key);
  }
  std::string ResourceVersion() const override {
    absl::MutexLock lock(&mu_);
    return resource_version_;
  }

 private:
  std::optional<Decoded<T>> Decode(const WireObject& wire) const {
    absl::StatusOr<T> obj = wire.json
                                ? options_.codec.from_json(*wire.json)
                                : options_.codec.from_protobuf(wire.protobuf);
    if (!obj.ok()) {
      LogUndecodable(options_.path, obj.status());
      return std::nullopt;
    }
    Identity id = options_.codec.identity(*obj);
    return Decoded<T>{std::move(id),
                      std::make_shared<const T>(*std::move(obj))};
  }

  void Listed(const WireObject& item) override {
    if (std::optional<Decoded<T>> d = Decode(item)) {
      listed_.push_back(*std::move(d));
    }
  }
  void DropListed() override { listed_.clear(); }
  void EndList(std::string resource_version) override {
    std::vector<Delta<T>> deltas;
    {
      absl::MutexLock lock(&mu_);
      deltas = store_.Replace(std::move(listed_));
      resource_version_ = std::move(resource_version);
    }
    listed_.clear();
    Dispatch(deltas);
  }
  void Watched(WatchEvent::Type type, const WireObject& wire) override {
    std::optional<Decoded<T>> d = Decode(wire);
    if (!d) return;
    std::vector<Delta<T>> deltas;
    {
      absl::MutexLock lock(&mu_);
      if (!d->id.resource_version.empty()) {
        resource_version_ = d->id.resource_version;
      }
      deltas = store_.Apply(type, *std::move(d));
    }
    Dispatch(deltas);
  }
  void Bookmark(std::string resource_version) override {
    if (resource_version.empty()) return;
    absl::MutexLock lock(&mu_);
    resource_version_ = std::move(resource_version);
  }

  void Dispatch(const std::vector<Delta<T>>& deltas) const {
    const EventHandlers<T>& h = options_.handlers;
    for (const Delta<T>& d : deltas) {
      switch (d.type) {
        case DeltaType::kAdded:
          if (h.on_add) h.on_add(d.obj);
          break;
        case DeltaType::kUpdated:
          if (h.on_update) h.on_update(d.old_obj, d.obj);
          break;
        case DeltaType::kDeleted:
          if (h.on_delete) h.on_delete(d.obj);
          break;
      }
    }
  }

  const InformerOptions<T> options_;
  std::vector<Decoded<T>> listed_;  // the list being read (reflector thread)
  mutable absl::Mutex mu_;
  Store<T> store_ ABSL_GUARDED_BY(mu_);
  std::string resource_version_ ABSL_GUARDED_BY(mu_);
  Reflector reflector_;  // last: stopped before the rest goes
};

}  // namespace kscore::kube

#endif  // KSCORE_SHIM_KUBE_INFORMER_H_
