#include "fuzz/targets.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/server_context.h"
#include "grpcpp/test/default_reactor_test_peer.h"
#include "kscore/scorer/v1/scorer.pb.h"
#include "model/config.h"
#include "model/wire_numbers.h"
#include "nlohmann/json.hpp"
#include "scorer/framework/profile_set.h"
#include "scorer/plugins/registry.h"
#include "scorer/server/scorer_service.h"
#include "shim/kube/client.h"
#include "shim/kube/informer.h"
#include "shim/kube/json_parse.h"
#include "shim/kube/json_text.h"
#include "shim/kube/leader_election.h"
#include "shim/kube/protobuf_codec.h"
#include "shim/kube/reviews.h"
#include "shim/kube/store.h"
#include "shim/objects/informer_codecs.h"
#include "shim/objects/manifest.h"
#include "shim/objects/objects.h"
#include "shim/objects/quantity.h"

namespace kscore::fuzz {
namespace {

namespace pb = ::kscore::scorer::v1;

// An invariant the input broke: reported, then abort() so that libFuzzer
// keeps the input and the regression test fails.
[[noreturn]] void Broken(absl::string_view what) {
  std::fprintf(stderr, "fuzz invariant broken: %.*s\n",
               static_cast<int>(what.size()), what.data());
  std::abort();
}

void CheckOk(const absl::Status& s, absl::string_view what) {
  if (!s.ok()) Broken(absl::StrCat(what, ": ", s.ToString()));
}

// What the shim sends the scorer must pass the scorer's checks of the wire
// numbers. A pod the shim would send (nothing noted invalid) passes them
// whole; any pod, bound ones included, counts on its node only what a node
// may hold: requests that are not negative, ports that are ports.
void NotNegative(const pb::Resources& r, absl::string_view what) {
  bool bad = r.milli_cpu() < 0 || r.memory() < 0 || r.ephemeral_storage() < 0 ||
             r.pods() < 0;
  for (const pb::ScalarResource& s : r.scalar()) bad = bad || s.value() < 0;
  if (bad) Broken(absl::StrCat(what, " negative: ", r.ShortDebugString()));
}

void CheckPodInfo(const objects::PodInfo& info) {
  if (info.invalid.empty()) {
    CheckOk(model::CheckPodNumbers(info.pod, "pod"), "decoded pod");
  }
  NotNegative(info.requests, "requests");
  NotNegative(info.non_zero, "non-zero requests");
  for (const pb::HostPort& hp : info.host_ports) {
    if (hp.port() < 0 || hp.port() > 65535) {
      Broken(absl::StrCat("host port ", hp.port()));
    }
  }
  kube::Identity id = objects::PodCodec().identity(info);
  if (id.key.empty() && !info.name.empty()) Broken("pod without key");
}

void CheckNodeInfo(const objects::NodeInfo& info) {
  CheckOk(model::CheckNodeNumbers(info.node, "node"), "decoded node");
  (void)objects::ImagesDigest(info.images);
}

// The informer's path for one object: decode, identity, what the store
// keeps.
template <typename T>
void Decoded(const kube::ObjectCodec<T>& codec, const absl::StatusOr<T>& obj) {
  if (!obj.ok()) return;
  (void)codec.identity(*obj);
  if (codec.keep) (void)codec.keep(*obj);
}

void PodProto(absl::string_view data) {
  const kube::ObjectCodec<objects::PodInfo> codec = objects::PodCodec();
  absl::StatusOr<objects::PodInfo> pod = codec.from_protobuf(data);
  Decoded(codec, pod);
  if (pod.ok()) CheckPodInfo(*pod);
}

void NodeProto(absl::string_view data) {
  const kube::ObjectCodec<objects::NodeInfo> codec = objects::NodeCodec();
  absl::StatusOr<objects::NodeInfo> node = codec.from_protobuf(data);
  Decoded(codec, node);
  if (node.ok()) CheckNodeInfo(*node);
}

constexpr objects::WorkloadKind kWorkloadKinds[] = {
    objects::WorkloadKind::kService, objects::WorkloadKind::kReplicaSet,
    objects::WorkloadKind::kStatefulSet,
    objects::WorkloadKind::kReplicationController};

// The other kinds the shim watches, each decoder on the same bytes.
void ObjectProto(absl::string_view data) {
  const auto ns = objects::NamespaceCodec();
  Decoded(ns, ns.from_protobuf(data));
  for (objects::WorkloadKind kind : kWorkloadKinds) {
    const auto w = objects::WorkloadCodec(kind);
    Decoded(w, w.from_protobuf(data));
  }
  const auto pdb = objects::PdbCodec();
  Decoded(pdb, pdb.from_protobuf(data));
  (void)kube::ResourceVersionOf(data);
}

// One frame of a protobuf watch, as the reflector handles it; and the same
// bytes as a list response or an error body.
void WatchFrame(absl::string_view data) {
  absl::StatusOr<kube::WatchEvent> event = kube::DecodeWatchFrame(data);
  if (event.ok()) {
    switch (event->type) {
      case kube::WatchEvent::Type::kError:
        (void)kube::WatchErrorStatus(event->object);
        break;
      case kube::WatchEvent::Type::kBookmark:
        (void)kube::ResourceVersionOf(event->protobuf);
        break;
      default:
        PodProto(event->protobuf);
        NodeProto(event->protobuf);
    }
  }
  if (kube::IsProtobufEnvelope(data)) {
    absl::StatusOr<kube::DecodedList> list = kube::DecodeList(data);
    if (list.ok()) {
      for (const std::string& item : list->items) PodProto(item);
    }
    (void)kube::Unwrap(data);
  }
  (void)kube::ErrorBodyText(data);
}

// As the shim parses JSON off the wire: bounded in depth (a value that does
// not parse is discarded).
nlohmann::json ParseJson(absl::string_view data) {
  absl::StatusOr<nlohmann::json> j = kube::ParseJson(data);
  return j.ok() ? *std::move(j)
                : nlohmann::json(nlohmann::json::value_t::discarded);
}

void PodJson(absl::string_view data) {
  const nlohmann::json obj = ParseJson(data);
  if (obj.is_discarded()) return;
  const kube::ObjectCodec<objects::PodInfo> codec = objects::PodCodec();
  absl::StatusOr<objects::PodInfo> pod = codec.from_json(obj);
  Decoded(codec, pod);
  if (pod.ok()) CheckPodInfo(*pod);
}

void NodeJson(absl::string_view data) {
  const nlohmann::json obj = ParseJson(data);
  if (obj.is_discarded()) return;
  const kube::ObjectCodec<objects::NodeInfo> codec = objects::NodeCodec();
  absl::StatusOr<objects::NodeInfo> node = codec.from_json(obj);
  Decoded(codec, node);
  if (node.ok()) CheckNodeInfo(*node);
}

// The other kinds in JSON, and a JSON watch line (an event, or an ERROR's
// Status).
void ObjectJson(absl::string_view data) {
  absl::StatusOr<kube::WatchEvent> event = kube::ParseWatchEvent(data);
  if (event.ok() && event->type == kube::WatchEvent::Type::kError) {
    (void)kube::WatchErrorStatus(event->object);
  }
  const nlohmann::json obj =
      event.ok() ? std::move(event->object) : ParseJson(data);
  if (obj.is_discarded()) return;
  const auto ns = objects::NamespaceCodec();
  Decoded(ns, ns.from_json(obj));
  for (objects::WorkloadKind kind : kWorkloadKinds) {
    const auto w = objects::WorkloadCodec(kind);
    Decoded(w, w.from_json(obj));
  }
  const auto pdb = objects::PdbCodec();
  Decoded(pdb, pdb.from_json(obj));
  (void)kube::WatchErrorStatus(obj);
}

// Any bytes through the bounded parser: what it accepts nests no deeper
// than the bound, and survives what the shim does to a value (copy, dump).
void Json(absl::string_view data) {
  absl::StatusOr<nlohmann::json> j = kube::ParseJson(data);
  if (!j.ok()) return;
  const std::string text = kube::JsonText(*j);
  if (kube::NestsDeeperThan(text, kube::kMaxJsonDepth)) Broken("too deep");
  const nlohmann::json copy = *j;
  if (copy != *j) Broken("copy differs");
}

// The body of POST /debug/kscore/what-if, up to the pod the scheduler would
// be asked about: refused with a message, or a pod like any informer's.
void WhatIfJson(absl::string_view data) {
  absl::StatusOr<objects::PodInfo> pod = objects::PodFromManifest(data);
  if (!pod.ok()) {
    if (!absl::IsInvalidArgument(pod.status())) Broken("not InvalidArgument");
    return;
  }
  CheckPodInfo(*pod);
}

// A Lease as the leader elector reads it from the API server, then the spec
// it would write back.
void LeaseJson(absl::string_view data) {
  const nlohmann::json lease = ParseJson(data);
  if (!lease.is_object()) return;
  const nlohmann::json spec = lease.value("spec", nlohmann::json::object());
  const absl::Time now = absl::FromUnixSeconds(1700000000);
  std::optional<nlohmann::json> next =
      kube::NextLeaseSpec(spec, "me", absl::Seconds(15), now);
  if (next.has_value()) (void)kube::JsonText(*next);
  (void)kube::JsonText(kube::ReleasedLeaseSpec(spec, now));
}

// The API server's answer to a TokenReview and to a SubjectAccessReview, as
// the status server's delegated authentication reads them: an answer that
// is not a JSON true never authenticates or allows, and an unauthenticated
// answer carries no user.
void ReviewJson(absl::string_view data) {
  absl::StatusOr<kube::TokenReviewStatus> t =
      kube::ParseTokenReviewAnswer(data, "POST tokenreviews");
  if (t.ok() && !t->authenticated &&
      (!t->user.name.empty() || !t->user.groups.empty())) {
    Broken("a user that is not authenticated");
  }
  absl::StatusOr<kube::AccessReviewStatus> a =
      kube::ParseAccessReviewAnswer(data, "POST subjectaccessreviews");
  if (t.ok() != a.ok()) Broken("one answer read, the other refused");
  if (a.ok() && a->allowed) {
    const nlohmann::json j = ParseJson(data);
    const nlohmann::json& status = j.at("status");
    auto allowed = status.find("allowed");
    auto denied = status.find("denied");
    if (allowed == status.end() || *allowed != true ||
        (denied != status.end() && *denied == true)) {
      Broken("allowed without allowed: true");
    }
  }
}

// A kubeconfig is read from a file: the input is written to one in a
// directory of this process's own (relative paths in it resolve there).
void Kubeconfig(absl::string_view data) {
  static const std::filesystem::path* const dir = [] {
    std::string tmpl =
        (std::filesystem::temp_directory_path() / "kscore-fuzz-XXXXXX")
            .string();
    if (mkdtemp(tmpl.data()) == nullptr) Broken("mkdtemp");
    return new std::filesystem::path(tmpl);
  }();
  const std::string path = (*dir / "kubeconfig").string();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
  }
  (void)kube::LoadKubeconfig(path);
  (void)kube::LoadKubeconfig(path, "ctx");
}

// Both scales the shim parses at. Rounding is away from zero, so the
// whole-unit value is the milli-unit one divided by 1000, rounded away from
// zero, unless either saturated.
void Quantity(absl::string_view data) {
  absl::StatusOr<int64_t> milli = objects::ParseQuantity(data, -3);
  absl::StatusOr<int64_t> units = objects::ParseQuantity(data, 0);
  if (milli.ok() != units.ok()) Broken("valid at one scale only");
  if (!milli.ok()) return;
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const bool neg = *milli < 0;
  const int64_t abs_milli = neg ? -*milli : *milli;
  const int64_t abs_units = *units < 0 ? -*units : *units;
  if (*milli != 0 && *units != 0 && (*units < 0) != neg) Broken("sign differs");
  if (abs_milli == kMax) return;  // saturated: units may be anything below
  if (abs_units == kMax) Broken("units saturated, milli-units not");
  if (abs_units != abs_milli / 1000 + (abs_milli % 1000 != 0 ? 1 : 0)) {
    Broken(absl::StrCat("units ", *units, " vs milli-units ", *milli));
  }
}

// Decoded, defaulted and validated, then built into profiles as both
// programs do at start-up.
void SchedulerConfig(absl::string_view data) {
  absl::StatusOr<model::SchedulerConfig> config =
      model::ParseSchedulerConfig(data);
  if (!config.ok()) return;
  (void)framework::BuildProfileSet(*std::move(config),
                                   plugins::DefaultRegistry());
}

// The profiles the scorer targets serve: kube-scheduler's defaults, and one
// with the project's own plugin and its args.
constexpr char kScorerConfig[] = R"(
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
- schedulerName: concentrate-scheduler
  plugins:
    score:
      enabled:
      - name: Concentrate
        weight: 10
  pluginConfig:
  - name: Concentrate
    args:
      labelKey: app
)";

// The scorer's gRPC service, called in process without a network: the
// bytes as the request message, then the method itself. Any status but
// INTERNAL or UNKNOWN is an answer; those two mean a check is missing.
class Scorer {
 public:
  static Scorer& Get() {
    static Scorer* const scorer = new Scorer();
    return *scorer;
  }

  template <typename Req, typename Resp, typename Method>
  void Call(absl::string_view data, Method method) {
    Req req;
    if (!req.ParseFromArray(data.data(), static_cast<int>(data.size()))) {
      return;
    }
    Resp resp;
    grpc::CallbackServerContext ctx;
    grpc::testing::DefaultReactorTestPeer peer(&ctx);
    (service_.get()->*method)(&ctx, &req, &resp);
    if (!peer.test_status_set()) Broken("call did not finish");
    const grpc::Status status = peer.test_status();
    if (status.error_code() == grpc::StatusCode::INTERNAL ||
        status.error_code() == grpc::StatusCode::UNKNOWN) {
      Broken(absl::StrCat("status ", status.error_code(), ": ",
                          status.error_message()));
    }
  }

 private:
  Scorer() {
    absl::StatusOr<std::unique_ptr<framework::ProfileSet>> set =
        framework::ParseProfileSet(kScorerConfig, plugins::DefaultRegistry());
    CheckOk(set.status(), "scorer config");
    profiles_ = *std::move(set);
    service_ = std::make_unique<server::ScorerService>(
        profiles_.get(), server::ServiceOptions{});
  }

  std::unique_ptr<framework::ProfileSet> profiles_;
  std::unique_ptr<server::ScorerService> service_;
};

void ScorerEvaluate(absl::string_view data) {
  Scorer::Get().Call<pb::EvaluateRequest, pb::EvaluateResponse>(
      data, &server::ScorerService::Evaluate);
}

void ScorerNormalize(absl::string_view data) {
  Scorer::Get().Call<pb::NormalizeScoreRequest, pb::NormalizeScoreResponse>(
      data, &server::ScorerService::NormalizeScore);
}

void ScorerPreempt(absl::string_view data) {
  Scorer::Get().Call<pb::PreemptRequest, pb::PreemptResponse>(
      data, &server::ScorerService::Preempt);
}

}  // namespace

const std::vector<Target>& Targets() {
  static const std::vector<Target>* const targets = new std::vector<Target>{
      {"pod_proto", PodProto},
      {"node_proto", NodeProto},
      {"object_proto", ObjectProto},
      {"watch_frame", WatchFrame},
      {"pod_json", PodJson},
      {"node_json", NodeJson},
      {"object_json", ObjectJson},
      {"json", Json},
      {"what_if_json", WhatIfJson},
      {"lease_json", LeaseJson},
      {"review_json", ReviewJson},
      {"kubeconfig", Kubeconfig},
      {"quantity", Quantity},
      {"scheduler_config", SchedulerConfig},
      {"scorer_evaluate", ScorerEvaluate},
      {"scorer_normalize", ScorerNormalize},
      {"scorer_preempt", ScorerPreempt},
  };
  return *targets;
}

const Target* FindTarget(absl::string_view name) {
  for (const Target& t : Targets()) {
    if (name == t.name) return &t;
  }
  return nullptr;
}

}  // namespace kscore::fuzz
