#ifndef KSCORE_SHIM_SCHEDULER_TESTING_FAKE_SCORER_H_
#define KSCORE_SHIM_SCHEDULER_TESTING_FAKE_SCORER_H_

// For tests: a Scorer that answers from a table, without gRPC.

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "shim/scorer_client/scorer.h"

namespace kscore::testing {

namespace pb = ::kscore::scorer::v1;

inline std::string NodeName(int i) { return absl::StrFormat("node-%03d", i); }

// A scorer answering Evaluate from a table keyed by node name (no gRPC): the
// rejected nodes with their reason, the others' raw scores. Records every
// request.
class FakeScorer : public scorer_client::Scorer {
 public:
  std::vector<std::string> plugins = {"Fake"};
  std::map<std::string, std::string> rejected;  // node -> Filter reason
  // node -> the rejection's code (default CODE_UNSCHEDULABLE).
  std::map<std::string, pb::Code> rejected_code;
  // PreFilter's code with pre_filter_reject (default unresolvable).
  pb::Code pre_filter_code = pb::CODE_UNSCHEDULABLE_AND_UNRESOLVABLE;
  std::map<std::string, int64_t> raw;  // node -> raw (default 0)
  // node -> total when the call normalises (default: its raw score).
  std::map<std::string, int64_t> call_totals;
  std::string pre_filter_reject;  // a PreFilter rejection's reason
  absl::Status evaluate_status;   // every Evaluate call fails with it
  absl::Status normalize_status;  // NormalizeScore fails with it
  std::function<void(pb::EvaluateResponse&)> tamper;  // edits each answer

  std::vector<pb::EvaluateRequest> evaluated;
  std::vector<pb::NormalizeScoreRequest> normalized;

  std::vector<absl::StatusOr<pb::EvaluateResponse*>> EvaluateAll(
      absl::Span<const std::string> requests,
      google::protobuf::Arena* arena) override {
    std::vector<absl::StatusOr<pb::EvaluateResponse*>> out;
    for (const std::string& bytes : requests) {
      pb::EvaluateRequest& req = evaluated.emplace_back();
      EXPECT_TRUE(req.ParseFromString(bytes));
      if (!evaluate_status.ok()) {
        out.push_back(evaluate_status);
        continue;
      }
      auto* resp =
          google::protobuf::Arena::CreateMessage<pb::EvaluateResponse>(arena);
      Answer(req, *resp);
      if (tamper) tamper(*resp);
      out.push_back(resp);
    }
    return out;
  }

  absl::StatusOr<pb::NormalizeScoreResponse> NormalizeScore(
      const pb::NormalizeScoreRequest& req) override {
    normalized.push_back(req);
    if (!normalize_status.ok()) return normalize_status;
    // Totals are the sums of the raw scores (weights 1, no normalising).
    pb::NormalizeScoreResponse resp;
    const int k = req.plugins_size();
    for (int i = 0; k > 0 && i < req.raw_size(); i += k) {
      int64_t sum = 0;
      for (int p = 0; p < k; ++p) sum += req.raw(i + p);
      resp.add_totals(sum);
    }
    return resp;
  }

  absl::StatusOr<pb::ListProfilesResponse> ListProfiles() override {
    return pb::ListProfilesResponse();
  }

  pb::PlanResponse plan;  // what Plan answers
  std::vector<pb::PlanRequest> planned;
  absl::StatusOr<pb::PlanResponse> Plan(const pb::PlanRequest& req) override {
    planned.push_back(req);
    return plan;
  }
  // Answers each query with `hint(query)`; every query Queue by default.
  std::function<bool(const pb::HintQuery&)> hint;
  absl::Status hint_status;  // every QueueingHint call fails with it
  std::vector<pb::QueueingHintRequest> hinted;
  absl::StatusOr<pb::QueueingHintResponse> QueueingHint(
      const pb::QueueingHintRequest& req) override {
    hinted.push_back(req);
    if (!hint_status.ok()) return hint_status;
    pb::QueueingHintResponse resp;
    for (const pb::HintQuery& q : req.queries()) {
      resp.add_queue(hint ? hint(q) : true);
    }
    return resp;
  }

  // Answers Preempt; unset, UNIMPLEMENTED (as a scorer without the call).
  std::function<absl::StatusOr<pb::PreemptResponse>(const pb::PreemptRequest&)>
      preempt;
  std::vector<pb::PreemptRequest> preempted;
  absl::StatusOr<pb::PreemptResponse> Preempt(
      const pb::PreemptRequest& req) override {
    preempted.push_back(req);
    if (!preempt) return absl::UnimplementedError("scorer: Preempt");
    return preempt(req);
  }

 private:
  void Answer(const pb::EvaluateRequest& req, pb::EvaluateResponse& resp) {
    if (!pre_filter_reject.empty()) {
      resp.mutable_status()->set_code(pre_filter_code);
      resp.mutable_status()->add_reasons(pre_filter_reject);
      return;
    }
    // Filter only: the rejections, no scores.
    const std::vector<std::string> scoring =
        req.filter_only() ? std::vector<std::string>() : plugins;
    for (const std::string& p : scoring) resp.add_plugins(p);
    for (int i = 0; i < req.nodes_size(); ++i) {
      const std::string& name = req.nodes(i).name();
      if (auto it = rejected.find(name); it != rejected.end()) {
        pb::RejectedNode* r = resp.add_rejected();
        r->set_index(i);
        auto code = rejected_code.find(name);
        r->mutable_status()->set_code(code == rejected_code.end()
                                          ? pb::CODE_UNSCHEDULABLE
                                          : code->second);
        r->mutable_status()->add_reasons(it->second);
        continue;
      }
      const int64_t score = raw.contains(name) ? raw.at(name) : 0;
      for (size_t p = 0; p < scoring.size(); ++p) resp.add_raw(score);
      if (req.skip_normalize() || req.filter_only()) continue;
      if (plugins.empty()) {
        resp.add_totals(0);
      } else {
        auto t = call_totals.find(name);
        resp.add_totals(t != call_totals.end()
                            ? t->second
                            : score * static_cast<int64_t>(plugins.size()));
      }
    }
  }
};

}  // namespace kscore::testing

#endif  // KSCORE_SHIM_SCHEDULER_TESTING_FAKE_SCORER_H_
