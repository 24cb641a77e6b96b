#include "format/text_style.h"

#include <fmt/color.h>
#include <fmt/format.h>

namespace headroom::format {
namespace {

// ESC '[' parameters then one final byte in '@'..'~' (ECMA-48 CSI); returns the index after it.
std::size_t SkipEscape(std::string_view text, std::size_t i) {
  if (i + 1 >= text.size() || text[i + 1] != '[') return i + 1;
  std::size_t j = i + 2;
  while (j < text.size() && (text[j] < '@' || text[j] > '~')) ++j;
  return j < text.size() ? j + 1 : j;
}

}  // namespace

std::string TextStyle::Paint(std::string_view text, Tone tone) const {
  if (!color_ || text.empty()) return std::string(text);
  // The 16 terminal colours, not RGB: they follow the user's terminal theme.
  switch (tone) {
    case Tone::kPlain:
      return std::string(text);
    case Tone::kBold:
      return fmt::format(fmt::emphasis::bold, "{}", text);
    case Tone::kRed:
      return fmt::format(fmt::fg(fmt::terminal_color::red), "{}", text);
    case Tone::kYellow:
      return fmt::format(fmt::fg(fmt::terminal_color::yellow), "{}", text);
    case Tone::kGreen:
      return fmt::format(fmt::fg(fmt::terminal_color::green), "{}", text);
  }
  return std::string(text);
}

std::string StripStyle(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == '\x1b') {
      i = SkipEscape(text, i);
    } else {
      out += text[i++];
    }
  }
  return out;
}

std::size_t VisibleWidth(std::string_view text) {
  std::size_t width = 0;
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] == '\x1b') {
      i = SkipEscape(text, i);
      continue;
    }
    // UTF-8 continuation bytes (10xxxxxx) belong to the code point before them.
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++width;
    ++i;
  }
  return width;
}

}  // namespace headroom::format
