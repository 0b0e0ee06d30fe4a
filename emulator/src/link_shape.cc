#include "link_shape.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "coll/error.hpp"

namespace coll {
namespace {

double number(const std::string& text, const std::string& what, const std::string& key) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(value) || value < 0) {
    throw Error(Status::InvalidArgument,
                what + ": '" + key + "' needs a non-negative number, got '" + text + "'");
  }
  return value;
}

LinkShape::Link link(const std::string& text, const std::string& what, const std::string& key) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) {
    throw Error(Status::InvalidArgument,
                what + ": '" + key + "' needs ALPHA_S:BETA_S_PER_BYTE, got '" + text + "'");
  }
  return {number(text.substr(0, colon), what, key), number(text.substr(colon + 1), what, key)};
}

}  // namespace

LinkShape LinkShape::parse(const std::string& text, const std::string& what) {
  LinkShape shape;
  bool intra = false, inter = false;
  std::stringstream items(text);
  for (std::string item; std::getline(items, item, ',');) {
    const auto equals = item.find('=');
    const std::string key = item.substr(0, equals);
    const std::string value = equals == std::string::npos ? "" : item.substr(equals + 1);
    if (key == "intra") {
      shape.intra = link(value, what, key);
      intra = true;
    } else if (key == "inter") {
      shape.inter = link(value, what, key);
      inter = true;
    } else if (key == "staging") {
      shape.staging_beta_s_per_byte = number(value, what, key);
    } else if (key == "scale") {
      shape.time_scale = number(value, what, key);
      if (shape.time_scale < 1) {
        throw Error(Status::InvalidArgument, what + ": scale must be at least 1, got " + value);
      }
    } else if (key == "clock") {
      if (value != "real" && value != "virtual") {
        throw Error(Status::InvalidArgument,
                    what + ": clock must be real or virtual, got '" + value + "'");
      }
      shape.virtual_clock = value == "virtual";
    } else if (key == "reduce") {
      shape.reduce_s_per_byte = number(value, what, key);
    } else {
      throw Error(Status::InvalidArgument, what + ": unknown part '" + item +
                                               "' (expected intra=ALPHA:BETA, "
                                               "inter=ALPHA:BETA, staging=BETA, scale=K, "
                                               "clock=real|virtual, reduce=GAMMA)");
    }
  }
  if (!intra || !inter) {
    throw Error(Status::InvalidArgument, what + " '" + text + "' must give both intra= and inter=");
  }
  if (shape.reduce_s_per_byte > 0 && !shape.virtual_clock) {
    throw Error(Status::InvalidArgument,
                what +
                    ": reduce= needs clock=virtual (on the real clock reductions take this "
                    "machine's own time)");
  }
  return shape;
}

std::string LinkShape::to_string() const {
  char text[256];
  std::snprintf(text, sizeof text, "intra=%.6g:%.6g,inter=%.6g:%.6g,staging=%.6g,scale=%.6g",
                intra.alpha_s, intra.beta_s_per_byte, inter.alpha_s, inter.beta_s_per_byte,
                staging_beta_s_per_byte, time_scale);
  std::string out = text;
  if (virtual_clock) out += ",clock=virtual";
  if (reduce_s_per_byte > 0) {
    std::snprintf(text, sizeof text, ",reduce=%.6g", reduce_s_per_byte);
    out += text;
  }
  return out;
}

}  // namespace coll
