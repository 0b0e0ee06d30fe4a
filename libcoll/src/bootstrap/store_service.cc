#include "bootstrap/store_service.hpp"

#include <charconv>
#include <climits>

#include "bootstrap/job_secret.hpp"

namespace coll::store {
namespace {

// Client text quoted in a reply or a log line: short, one line, no control bytes.
std::string printable(const std::string& text) {
  constexpr std::size_t kShown = 40;
  std::string shown;
  for (const char c : text.substr(0, kShown)) shown.push_back(c >= ' ' && c <= '~' ? c : '?');
  return "'" + shown + (text.size() > kShown ? "...'" : "'");
}

}  // namespace

std::optional<long long> parse_decimal(const std::string& text) {
  long long value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || stop != end) return std::nullopt;
  return value;
}

Service::Service(std::string token, int job_size, ServiceLimits limits, Send send)
    : token_(std::move(token)), job_size_(job_size), limits_(limits), send_(std::move(send)) {}

void Service::connected(ConnectionId connection) {
  constexpr std::size_t kChallengeBytes = 16;
  const std::string challenge = to_hex(random_bytes(kChallengeBytes));
  peers_[connection].challenge = challenge;
  reply(connection, Op::Challenge, challenge);
}

void Service::reply(ConnectionId to, Op op, const std::string& value) {
  send_(to, encode({op, "", value}));
}

std::optional<std::string> Service::handle(ConnectionId from, Message&& message) {
  Peer& peer = peers_[from];
  if (!peer.authenticated) return hello(from, peer, message);
  if (message.key.size() > limits_.key_bytes) {
    const std::string why = "a key of " + std::to_string(message.key.size()) +
                            " bytes is over the store's limit of " +
                            std::to_string(limits_.key_bytes);
    reply(from, Op::Error, why);
    return why;
  }
  switch (message.op) {
    case Op::Set:
      if (!store(message.key, std::move(message.value))) {
        const std::string why = "the store is full (" + std::to_string(limits_.stored_bytes) +
                                " bytes of keys and values)";
        reply(from, Op::Error, why);
        return why;
      }
      return std::nullopt;
    case Op::Get:
      if (peer.waits >= limits_.waits_per_connection) {
        const std::string why = "more than " + std::to_string(limits_.waits_per_connection) +
                                " GETs waiting on one connection";
        reply(from, Op::Error, why);
        return why;
      }
      get(from, peer, message);
      return std::nullopt;
    case Op::Add:
      add(from, message);
      return std::nullopt;
    case Op::Fail:
      abort(message.value.substr(0, kMaxFailBytes));
      return std::nullopt;
    default:
      reply(from, Op::Error, "unexpected store request");
      return "sent a request of unexpected kind '" + std::string(1, static_cast<char>(message.op)) +
             "'";
  }
}

std::optional<std::string> Service::hello(ConnectionId from, Peer& peer, const Message& message) {
  const auto refuse = [&](const std::string& why) -> std::optional<std::string> {
    reply(from, Op::Error, "store refused the connection: " + why);
    return "refused: " + why;
  };
  if (message.op != Op::Hello) return refuse("the first request must be the hello");
  if (!hello_key_valid(token_, peer.challenge, message.key, message.value)) {
    return refuse("wrong job token (COLL_TOKEN)");
  }
  const std::size_t slash = message.value.find('/');
  const auto rank = parse_decimal(message.value.substr(0, slash));
  const auto size =
      slash == std::string::npos ? std::nullopt : parse_decimal(message.value.substr(slash + 1));
  if (!rank || !size || *size < 1 || *size > INT_MAX) {
    return refuse("the hello's rank " + printable(message.value) + " is not of the form RANK/SIZE");
  }
  if (job_size_ != 0 && *size != job_size_) {
    return refuse("rank " + std::to_string(*rank) + " belongs to a job of " +
                  std::to_string(*size) + " ranks, this store serves " + std::to_string(job_size_) +
                  " (COLL_SIZE)");
  }
  if (*rank < 0 || *rank >= *size) {
    return refuse("rank " + std::to_string(*rank) + " is not within a job of size " +
                  std::to_string(*size) + " (COLL_RANK)");
  }
  if (ranks_.contains(static_cast<int>(*rank))) {
    return refuse("rank " + std::to_string(*rank) +
                  " is already connected (two processes with the same COLL_RANK?)");
  }
  job_size_ = static_cast<int>(*size);
  peer.authenticated = true;
  peer.rank = static_cast<int>(*rank);
  ranks_[peer.rank] = from;
  reply(from, Op::Reply, welcome_proof(token_, peer.challenge, message.key, message.value));
  if (!abort_reason_.empty()) reply(from, Op::Abort, abort_reason_);
  return std::nullopt;
}

bool Service::store(const std::string& key, std::string value) {
  const auto found = values_.find(key);
  const std::size_t replaced = found == values_.end() ? 0 : key.size() + found->second.size();
  const std::size_t total = stored_bytes_ - replaced + key.size() + value.size();
  if (total > limits_.stored_bytes) return false;
  stored_bytes_ = total;
  const auto [begin, end] = waiters_.equal_range(key);
  for (auto it = begin; it != end; ++it) {
    reply(it->second, Op::Reply, value);
    --peers_[it->second].waits;
  }
  waiters_.erase(begin, end);
  values_[key] = std::move(value);
  return true;
}

void Service::get(ConnectionId from, Peer& peer, const Message& message) {
  const auto found = values_.find(message.key);
  if (found != values_.end()) {
    reply(from, Op::Reply, found->second);
    return;
  }
  waiters_.emplace(message.key, from);
  ++peer.waits;
}

void Service::add(ConnectionId from, const Message& message) {
  const std::string what = "store ADD on " + printable(message.key);
  const auto delta = parse_decimal(message.value);
  if (!delta) {
    return reply(from, Op::Error,
                 what + ": the delta " + printable(message.value) + " is not a decimal number");
  }
  long long current = 0;
  if (const auto found = values_.find(message.key); found != values_.end()) {
    const auto stored = parse_decimal(found->second);
    if (!stored) {
      return reply(from, Op::Error,
                   what + ": the stored value " + printable(found->second) + " is not a number");
    }
    current = *stored;
  }
  long long total = 0;
  if (__builtin_add_overflow(current, *delta, &total)) {
    return reply(from, Op::Error,
                 what + ": " + std::to_string(current) + " + " + std::to_string(*delta) +
                     " overflows a 64-bit counter");
  }
  const std::string text = std::to_string(total);
  if (!store(message.key, text)) {
    return reply(from, Op::Error, what + ": the store is full");
  }
  reply(from, Op::Reply, text);
}

void Service::disconnect(ConnectionId connection) {
  const auto found = peers_.find(connection);
  if (found == peers_.end()) return;
  if (found->second.authenticated) ranks_.erase(found->second.rank);
  std::erase_if(waiters_, [connection](const auto& entry) { return entry.second == connection; });
  peers_.erase(found);
}

std::optional<std::string> Service::value(const std::string& key) const {
  const auto found = values_.find(key);
  if (found == values_.end()) return std::nullopt;
  return found->second;
}

bool Service::authenticated(ConnectionId connection) const {
  const auto found = peers_.find(connection);
  return found != peers_.end() && found->second.authenticated;
}

std::string Service::describe(ConnectionId connection) const {
  const auto found = peers_.find(connection);
  if (found == peers_.end() || !found->second.authenticated) return "an unauthenticated client";
  return "rank " + std::to_string(found->second.rank);
}

void Service::abort(const std::string& reason) {
  if (!abort_reason_.empty()) return;  // the first failure is the one to report
  abort_reason_ = reason.empty() ? "the job failed" : reason;
  for (const auto& [connection, peer] : peers_) {
    if (peer.authenticated) reply(connection, Op::Abort, abort_reason_);
  }
}

}  // namespace coll::store
