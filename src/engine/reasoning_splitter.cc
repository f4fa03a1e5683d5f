#include "engine/reasoning_splitter.h"

#include <algorithm>

namespace cairn::engine {
namespace {

bool StartsWith(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && text.compare(0, prefix.size(), prefix) == 0;
}

// Longest k < tag.size() with `text` ending in tag[0:k] (a tag cut by the chunk end).
size_t PartialTagSuffix(std::string_view text, std::string_view tag) {
  for (size_t k = std::min(text.size(), tag.size() - 1); k > 0; --k) {
    if (text.compare(text.size() - k, k, tag.substr(0, k)) == 0) return k;
  }
  return 0;
}

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; }

}  // namespace

std::vector<ReasoningTags> DefaultReasoningTags() { return {{"<think>", "</think>"}}; }

ReasoningSplitter::ReasoningSplitter(bool start_in_reasoning, std::vector<ReasoningTags> tags)
    : tags_(std::move(tags)), state_(start_in_reasoning ? State::kReasoning : State::kStart) {}

SplitDelta ReasoningSplitter::Feed(std::string_view text) {
  SplitDelta out;
  pending_.append(text);
  Run(out);
  return out;
}

SplitDelta ReasoningSplitter::Finish() {
  SplitDelta out;
  Run(out);
  switch (state_) {
    case State::kStart:
      out.content += pending_;  // whitespace, or the start of an opener that never completed
      break;
    case State::kReasoning: {
      // Truncated before the closer: everything left is reasoning, trailing newlines dropped.
      std::string rest = reasoning_started_ ? held_newlines_ + pending_ : pending_;
      if (!reasoning_started_) rest.erase(0, rest.find_first_not_of('\n'));
      while (!rest.empty() && rest.back() == '\n') rest.pop_back();
      out.reasoning += rest;
      break;
    }
    case State::kAfterClose:
    case State::kContent:
      break;
  }
  pending_.clear();
  held_newlines_.clear();
  return out;
}

void ReasoningSplitter::Run(SplitDelta& out) {
  // Each step either changes state or returns having consumed what it can.
  for (;;) {
    const State before = state_;
    switch (state_) {
      case State::kStart:
        RunStart(out);
        break;
      case State::kReasoning:
        RunReasoning(out);
        break;
      case State::kAfterClose:
        RunAfterClose();
        break;
      case State::kContent:
        out.content += pending_;
        pending_.clear();
        break;
    }
    if (state_ == before) return;
  }
}

void ReasoningSplitter::RunStart(SplitDelta& out) {
  size_t ws = 0;
  while (ws < pending_.size() && IsSpace(pending_[ws])) ++ws;
  const std::string_view rest = std::string_view(pending_).substr(ws);
  if (rest.empty()) return;  // only whitespace so far: undecided
  bool partial = false;
  for (size_t i = 0; i < tags_.size(); ++i) {
    const std::string& open = tags_[i].open;
    if (StartsWith(rest, open)) {
      pending_.erase(0, ws + open.size());
      EnterReasoning(static_cast<int>(i));
      return;
    }
    if (StartsWith(open, rest)) partial = true;
  }
  if (partial) return;  // "<thi" at the chunk end: wait for more
  state_ = State::kContent;
}

void ReasoningSplitter::EnterReasoning(int pair) {
  state_ = State::kReasoning;
  pair_ = pair;
  reasoning_started_ = false;
  held_newlines_.clear();
}

void ReasoningSplitter::RunReasoning(SplitDelta& out) {
  if (!reasoning_started_) {
    pending_.erase(0, pending_.find_first_not_of('\n') == std::string::npos
                          ? pending_.size()
                          : pending_.find_first_not_of('\n'));
    if (pending_.empty()) return;
    // A prompt-opened block whose output repeats the opener: swallow it once.
    if (pair_ < 0) {
      for (const ReasoningTags& tags : tags_) {
        if (StartsWith(pending_, tags.open)) {
          pending_.erase(0, tags.open.size());
          reasoning_started_ = false;
          return RunReasoning(out);
        }
        if (StartsWith(tags.open, pending_)) return;  // maybe an opener: wait
      }
    }
  }

  // Earliest closer in the pending text.
  size_t found = std::string::npos;
  size_t found_size = 0;
  size_t keep = 0;  // bytes held back as a possible partial closer
  for (size_t i = 0; i < tags_.size(); ++i) {
    if (pair_ >= 0 && static_cast<int>(i) != pair_) continue;
    const std::string& close = tags_[i].close;
    const size_t pos = pending_.find(close);
    if (pos != std::string::npos && pos < found) {
      found = pos;
      found_size = close.size();
    }
    keep = std::max(keep, PartialTagSuffix(pending_, close));
  }

  if (found != std::string::npos) {
    std::string text = held_newlines_ + pending_.substr(0, found);
    if (!reasoning_started_) text.erase(0, text.find_first_not_of('\n'));
    while (!text.empty() && text.back() == '\n') text.pop_back();
    out.reasoning += text;
    held_newlines_.clear();
    pending_.erase(0, found + found_size);
    state_ = State::kAfterClose;
    return;
  }

  const std::string_view emit = std::string_view(pending_).substr(0, pending_.size() - keep);
  const size_t body_end = emit.find_last_not_of('\n');
  if (body_end == std::string_view::npos) {
    held_newlines_.append(emit);  // only newlines: they might precede the closer
  } else {
    out.reasoning += held_newlines_;
    out.reasoning.append(emit.substr(0, body_end + 1));
    held_newlines_.assign(emit.substr(body_end + 1));
    reasoning_started_ = true;
  }
  pending_.erase(0, emit.size());
}

void ReasoningSplitter::RunAfterClose() {
  size_t ws = 0;
  while (ws < pending_.size() && IsSpace(pending_[ws])) ++ws;
  pending_.erase(0, ws);
  if (!pending_.empty()) state_ = State::kContent;
}

}  // namespace cairn::engine
