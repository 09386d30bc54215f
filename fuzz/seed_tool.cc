// Turns what fuzz/record_seeds.sh records into seed files of fuzz/corpus/:
//   seed_tool items LIST OUT_PREFIX     a protobuf list response (envelope)
//                                       -> one file per object's bytes
//   seed_tool object ENVELOPE OUT       one object's response (envelope)
//                                       -> the object's bytes
//   seed_tool frames STREAM OUT_PREFIX  a protobuf watch stream (4-byte
//                                       big-endian lengths) -> one file a frame
//   seed_tool request TYPE JSON OUT     a scorer request in JSON (as
//                                       examples/grpcurl/) -> its binary form;
//                                       TYPE: Evaluate, NormalizeScore, Preempt
// Files are named OUT_PREFIX-<n>.
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/message.h"
#include "google/protobuf/util/json_util.h"
#include "kscore/scorer/v1/scorer.pb.h"
#include "shim/kube/protobuf_codec.h"

namespace {

namespace pb = ::kscore::scorer::v1;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool WriteAll(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  return static_cast<bool>(out);
}

int Fail(const std::string& msg) {
  std::fprintf(stderr, "seed_tool: %s\n", msg.c_str());
  return 1;
}

int Items(const std::string& list_path, const std::string& prefix) {
  absl::StatusOr<kscore::kube::DecodedList> list =
      kscore::kube::DecodeList(ReadAll(list_path));
  if (!list.ok()) return Fail(std::string(list.status().message()));
  int n = 0;
  for (const std::string& item : list->items) {
    if (!WriteAll(absl::StrCat(prefix, "-", n++), item)) {
      return Fail("cannot write " + prefix);
    }
  }
  std::printf("%d items\n", n);
  return 0;
}

int Object(const std::string& path, const std::string& out) {
  absl::StatusOr<std::string> raw = kscore::kube::Unwrap(ReadAll(path));
  if (!raw.ok()) return Fail(std::string(raw.status().message()));
  return WriteAll(out, *raw) ? 0 : Fail("cannot write " + out);
}

int Frames(const std::string& stream_path, const std::string& prefix) {
  const std::string s = ReadAll(stream_path);
  size_t at = 0;
  int n = 0;
  while (s.size() - at >= 4) {
    const auto* p = reinterpret_cast<const unsigned char*>(s.data() + at);
    const size_t len = (size_t{p[0]} << 24) | (size_t{p[1]} << 16) |
                       (size_t{p[2]} << 8) | size_t{p[3]};
    if (s.size() - at - 4 < len) break;
    if (!WriteAll(absl::StrCat(prefix, "-", n++), s.substr(at + 4, len))) {
      return Fail("cannot write " + prefix);
    }
    at += 4 + len;
  }
  std::printf("%d frames\n", n);
  return 0;
}

int Request(const std::string& type, const std::string& json_path,
            const std::string& out) {
  std::unique_ptr<google::protobuf::Message> msg;
  if (type == "Evaluate") {
    msg = std::make_unique<pb::EvaluateRequest>();
  } else if (type == "NormalizeScore") {
    msg = std::make_unique<pb::NormalizeScoreRequest>();
  } else if (type == "Preempt") {
    msg = std::make_unique<pb::PreemptRequest>();
  } else {
    return Fail("unknown request type " + type);
  }
  const auto st = google::protobuf::util::JsonStringToMessage(
      ReadAll(json_path), msg.get());
  if (!st.ok()) return Fail(json_path + ": " + st.ToString());
  return WriteAll(out, msg->SerializeAsString()) ? 0
                                                 : Fail("cannot write " + out);
}

}  // namespace

int main(int argc, char** argv) {
  const std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "items" && argc == 4) return Items(argv[2], argv[3]);
  if (cmd == "object" && argc == 4) return Object(argv[2], argv[3]);
  if (cmd == "frames" && argc == 4) return Frames(argv[2], argv[3]);
  if (cmd == "request" && argc == 5) return Request(argv[2], argv[3], argv[4]);
  return Fail(
      "usage: seed_tool items LIST PREFIX | object ENVELOPE OUT | frames "
      "STREAM PREFIX | "
      "request TYPE JSON OUT");
}
