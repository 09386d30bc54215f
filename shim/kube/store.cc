#include "shim/kube/store.h"

#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace kscore::kube {
namespace {

std::string Field(const nlohmann::json& obj, const char* field) {
  const auto meta = obj.find("metadata");
  if (meta == obj.end() || !meta->is_object()) return "";
  const auto it = meta->find(field);
  return it != meta->end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

absl::StatusOr<WatchEvent::Type> WatchEventTypeOf(absl::string_view t) {
  if (t == "ADDED") return WatchEvent::Type::kAdded;
  if (t == "MODIFIED") return WatchEvent::Type::kModified;
  if (t == "DELETED") return WatchEvent::Type::kDeleted;
  if (t == "BOOKMARK") return WatchEvent::Type::kBookmark;
  if (t == "ERROR") return WatchEvent::Type::kError;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown watch event type \"", t, "\""));
}

absl::StatusOr<WatchEvent> ParseWatchEvent(absl::string_view line) {
  nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "watch event is not a JSON object: ", line.substr(0, 200)));
  }
  const auto type = j.find("type");
  const auto object = j.find("object");
  if (type == j.end() || !type->is_string() || object == j.end() ||
      !object->is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "watch event without type or object: ", line.substr(0, 200)));
  }
  absl::StatusOr<WatchEvent::Type> t =
      WatchEventTypeOf(type->get<std::string>());
  if (!t.ok()) return t.status();
  WatchEvent event;
  event.type = *t;
  event.object = std::move(*object);
  return event;
}

std::string Store::KeyOf(const nlohmann::json& obj) {
  const std::string ns = Field(obj, "namespace");
  const std::string name = Field(obj, "name");
  return ns.empty() ? name : absl::StrCat(ns, "/", name);
}

ObjectPtr Store::Kept(const ObjectPtr& obj) const {
  if (!keep_) return obj;
  nlohmann::json kept = keep_(*obj);
  if (!kept.is_object()) kept = nlohmann::json::object();
  nlohmann::json& meta = kept["metadata"];
  if (!meta.is_object()) meta = nlohmann::json::object();
  const auto from = obj->find("metadata");
  if (from != obj->end() && from->is_object()) {
    for (const char* f : {"name", "namespace", "uid", "resourceVersion"}) {
      const auto v = from->find(f);
      if (v != from->end()) meta[f] = *v;
    }
  }
  return std::make_shared<const nlohmann::json>(std::move(kept));
}

void Store::Upsert(const std::string& key, ObjectPtr obj, bool only_if_changed,
                   std::vector<Delta>* out) {
  auto it = items_.find(key);
  if (it == items_.end()) {
    items_.emplace(key, Kept(obj));
    out->push_back({Delta::Type::kAdded, std::move(obj), nullptr});
    return;
  }
  ObjectPtr old = it->second;
  if (Field(*old, "uid") != Field(*obj, "uid")) {
    it->second = Kept(obj);
    out->push_back({Delta::Type::kDeleted, std::move(old), nullptr});
    out->push_back({Delta::Type::kAdded, std::move(obj), nullptr});
    return;
  }
  if (only_if_changed &&
      Field(*old, "resourceVersion") == Field(*obj, "resourceVersion")) {
    return;
  }
  it->second = Kept(obj);
  out->push_back({Delta::Type::kUpdated, std::move(obj), std::move(old)});
}

std::vector<Delta> Store::Replace(std::vector<nlohmann::json> items) {
  std::vector<Delta> out;
  absl::flat_hash_set<std::string> seen;
  for (nlohmann::json& item : items) {
    std::string key = KeyOf(item);
    Upsert(key, std::make_shared<const nlohmann::json>(std::move(item)),
           /*only_if_changed=*/true, &out);
    seen.insert(std::move(key));
  }
  for (auto it = items_.begin(); it != items_.end();) {
    if (seen.contains(it->first)) {
      ++it;
      continue;
    }
    out.push_back({Delta::Type::kDeleted, it->second, nullptr});
    items_.erase(it++);
  }
  return out;
}

std::vector<Delta> Store::Apply(WatchEvent event) {
  std::vector<Delta> out;
  const std::string key = KeyOf(event.object);
  switch (event.type) {
    case WatchEvent::Type::kAdded:
    case WatchEvent::Type::kModified:
      Upsert(key,
             std::make_shared<const nlohmann::json>(std::move(event.object)),
             /*only_if_changed=*/false, &out);
      break;
    case WatchEvent::Type::kDeleted: {
      // A delete of an object never seen is not news to anyone.
      auto it = items_.find(key);
      if (it == items_.end()) break;
      items_.erase(it);
      out.push_back(
          {Delta::Type::kDeleted,
           std::make_shared<const nlohmann::json>(std::move(event.object)),
           nullptr});
      break;
    }
    case WatchEvent::Type::kBookmark:
    case WatchEvent::Type::kError:
      break;
  }
  return out;
}

ObjectPtr Store::Get(absl::string_view key) const {
  auto it = items_.find(key);
  return it == items_.end() ? nullptr : it->second;
}

std::vector<ObjectPtr> Store::List() const {
  std::vector<ObjectPtr> out;
  out.reserve(items_.size());
  for (const auto& [key, obj] : items_) out.push_back(obj);
  return out;
}

}  // namespace kscore::kube
