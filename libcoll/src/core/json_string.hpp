// A JSON string literal for any text: quotes, backslashes and control characters escaped,
// UTF-8 bytes passed through. Shared by every JSON the project writes.
#pragma once

#include <string>
#include <string_view>

namespace coll {
std::string json_quoted(std::string_view text);
}
