// TextStyle: how text for the terminal is emphasised (bold, red, yellow, green as ANSI SGR escape
// codes), or not at all. It applies colour but never decides it: whether colour is wanted (a
// terminal, NO_COLOR, CI, --color) is decided once, in console/terminal.h, and handed down as a
// TextStyle. Also the width of text as a terminal shows it, so tables align whether or not cells
// are coloured. Thread-compatible (a TextStyle is an immutable value).
#ifndef HEADROOM_FORMAT_TEXT_STYLE_H_
#define HEADROOM_FORMAT_TEXT_STYLE_H_

#include <cstddef>
#include <string>
#include <string_view>

namespace headroom::format {

enum class Tone { kPlain, kBold, kRed, kYellow, kGreen };

class TextStyle {
 public:
  // Plain: Paint returns the text unchanged.
  TextStyle() = default;
  explicit TextStyle(bool color) : color_(color) {}

  bool color() const { return color_; }

  // `text` wrapped in the tone's escape code and a reset, or `text` itself when colour is off,
  // the tone is kPlain or the text is empty.
  std::string Paint(std::string_view text, Tone tone) const;
  std::string Bold(std::string_view text) const { return Paint(text, Tone::kBold); }
  std::string Red(std::string_view text) const { return Paint(text, Tone::kRed); }
  std::string Yellow(std::string_view text) const { return Paint(text, Tone::kYellow); }
  std::string Green(std::string_view text) const { return Paint(text, Tone::kGreen); }

 private:
  bool color_ = false;
};

// `text` without its ANSI escape sequences (ESC '[' ... final byte).
std::string StripStyle(std::string_view text);

// Columns `text` takes on a terminal: UTF-8 code points outside escape sequences (every code
// point counted as one column, which holds for the Latin, Greek and symbol text we print).
std::size_t VisibleWidth(std::string_view text);

}  // namespace headroom::format

#endif  // HEADROOM_FORMAT_TEXT_STYLE_H_
