#include "model/yaml_decode.h"

#include <algorithm>
#include <charconv>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "common/status_macros.h"

namespace kscore::model {

YamlField YamlField::Child(absl::string_view key) const {
  YAML::Node child = node_.IsMap() ? node_[std::string(key)]
                                   : YAML::Node(YAML::NodeType::Undefined);
  return YamlField(
      child, path_.empty() ? std::string(key) : absl::StrCat(path_, ".", key));
}

YamlField YamlField::Index(size_t i) const {
  return YamlField(node_[i], absl::StrCat(path_, "[", i, "]"));
}

absl::Status YamlField::Error(absl::string_view message) const {
  if (path_.empty()) return absl::InvalidArgumentError(message);
  return absl::InvalidArgumentError(absl::StrCat(path_, ": ", message));
}

std::string YamlField::Describe() const {
  switch (node_.Type()) {
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar:
      return absl::StrCat("\"", node_.Scalar(), "\"");
    default:
      return "nothing";
  }
}

absl::Status YamlField::ExpectMap(
    absl::Span<const absl::string_view> allowed) const {
  if (!present()) return absl::OkStatus();
  if (!node_.IsMap()) {
    return Error(absl::StrCat("expected a mapping, got ", Describe()));
  }
  for (const auto& kv : node_) {
    if (!kv.first.IsScalar()) return Error("keys must be strings");
    const std::string& key = kv.first.Scalar();
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      return Child(key).Error(
          absl::StrCat("unknown field \"", key,
                       "\" (known: ", absl::StrJoin(allowed, ", "), ")"));
    }
  }
  return absl::OkStatus();
}

absl::Status YamlField::ExpectSequence() const {
  if (!present() || node_.IsSequence()) return absl::OkStatus();
  return Error(absl::StrCat("expected a list, got ", Describe()));
}

absl::StatusOr<std::string> YamlField::String() const {
  if (!node_.IsScalar()) {
    return Error(absl::StrCat("expected a string, got ", Describe()));
  }
  return node_.Scalar();
}

absl::StatusOr<bool> YamlField::Bool() const {
  if (node_.IsScalar()) {
    // YAML 1.2 core schema booleans, as Kubernetes' decoder accepts them.
    const std::string& s = node_.Scalar();
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
  }
  return Error(absl::StrCat("expected true or false, got ", Describe()));
}

absl::StatusOr<int64_t> YamlField::Int(int64_t min, int64_t max) const {
  if (node_.IsScalar() && node_.Tag() != "!") {
    const std::string& s = node_.Scalar();
    int64_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc() && end == s.data() + s.size()) {
      if (v < min || v > max) {
        return Error(
            absl::StrCat("must be between ", min, " and ", max, ", got ", v));
      }
      return v;
    }
  }
  return Error(absl::StrCat("expected an integer, got ", Describe()));
}

absl::StatusOr<double> YamlField::Double() const {
  if (node_.IsScalar() && node_.Tag() != "!") {
    const std::string& s = node_.Scalar();
    double v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec == std::errc() && end == s.data() + s.size()) return v;
  }
  return Error(absl::StrCat("expected a number, got ", Describe()));
}

namespace {

absl::Status WalkNoDuplicateKeys(const YAML::Node& node,
                                 const std::string& path, size_t max_nodes,
                                 size_t* walked) {
  if (++*walked > max_nodes) {
    return absl::InvalidArgumentError(absl::StrCat(
        path.empty() ? "" : absl::StrCat(path, ": "), "more than ", max_nodes,
        " YAML nodes once aliases are expanded (the bound on a "
        "configuration; are aliases nested within aliases?)"));
  }
  auto child_path = [&](absl::string_view key) {
    return path.empty() ? std::string(key) : absl::StrCat(path, ".", key);
  };
  if (node.IsSequence()) {
    for (size_t i = 0; i < node.size(); ++i) {
      KSCORE_RETURN_IF_ERROR(WalkNoDuplicateKeys(
          node[i], absl::StrCat(path, "[", i, "]"), max_nodes, walked));
    }
  } else if (node.IsMap()) {
    std::map<std::string, int> first_line;  // key -> line (1-based)
    for (const auto& kv : node) {
      // Non-string keys are refused where the mapping is decoded.
      if (!kv.first.IsScalar()) continue;
      const std::string& key = kv.first.Scalar();
      int line = kv.first.Mark().line + 1;
      if (auto [it, inserted] = first_line.emplace(key, line); !inserted) {
        return absl::InvalidArgumentError(absl::StrCat(
            child_path(key), ": key \"", key, "\" already set in map (line ",
            line, ", first on line ", it->second, ")"));
      }
      KSCORE_RETURN_IF_ERROR(
          WalkNoDuplicateKeys(kv.second, child_path(key), max_nodes, walked));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckNoDuplicateKeys(const YAML::Node& node,
                                  const std::string& path, size_t max_nodes) {
  size_t walked = 0;
  return WalkNoDuplicateKeys(node, path, max_nodes, &walked);
}

}  // namespace kscore::model
