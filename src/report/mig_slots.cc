#include "report/mig_slots.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "format/html.h"

namespace headroom::report {
namespace {

// Layout of the drawing, in user units: a header line with the slice numbers, the row, a gap,
// then the side text. Text is 12 units high; a line in a block 15.
constexpr double kTop = 28;
constexpr double kHeaderLine = 18;
constexpr double kLine = 15;
constexpr double kMinBlockHeight = 64;
constexpr double kSideGap = 24;
constexpr double kSideWidth = 300;

// Light fills that stay readable under dark text, one per block in turn.
constexpr std::array<const char*, 6> kFills = {"#cfe2f3", "#d9ead3", "#fce5cd",
                                               "#ead1dc", "#fff2cc", "#d0e0e3"};

double BlockHeight(const SlotDiagram& d) {
  std::size_t lines = 0;
  for (const SlotBlock& b : d.blocks) lines = std::max(lines, b.lines.size());
  return std::max(kMinBlockHeight, 2 * kHeaderLine + 8 + kLine * static_cast<double>(lines));
}

double RowWidth(const SlotDiagram& d) { return kSlotCellWidth * std::max(d.memory_slices, 1); }

std::string Text(double x, double y, std::string_view text, std::string_view attrs = "") {
  return fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\"{}{}>{}</text>", x, y,
                     attrs.empty() ? "" : " ", attrs, format::HtmlEscape(text));
}

std::string Block(const SlotDiagram& d, const SlotBlock& b, std::size_t index) {
  const SlotBox box = SlotBlockBox(d, b);
  std::string tooltip = b.label + (b.detail.empty() ? "" : ", " + b.detail);
  for (const std::string& line : b.lines) tooltip += "\n" + line;
  std::string out = fmt::format(
      "<g class=\"gi\"><title>{}</title>"
      "<rect class=\"gi\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" rx=\"6\" "
      "fill=\"{}\" stroke=\"#ffffff\" stroke-width=\"3\"/>",
      format::HtmlEscape(tooltip), box.x, box.y, box.width, box.height,
      kFills[index % kFills.size()]);
  // A nested <svg> clips its content to the block, so a long name never spills onto the next.
  out += fmt::format("<svg x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\">",
                     box.x + 6, box.y, std::max(box.width - 12, 0.0), box.height);
  out += Text(0, kHeaderLine, b.label, "font-weight=\"600\"");
  if (!b.detail.empty()) out += Text(0, 2 * kHeaderLine, b.detail, "fill=\"#4a5560\"");
  for (std::size_t k = 0; k < b.lines.size(); ++k) {
    out += Text(0, 2 * kHeaderLine + 6 + kLine * static_cast<double>(k + 1), b.lines[k],
                "class=\"line\"");
  }
  return out + "</svg></g>";
}

}  // namespace

SlotBox SlotBlockBox(const SlotDiagram& diagram, const SlotBlock& block) {
  return {.x = kSlotRowLeft + kSlotCellWidth * block.start,
          .y = kTop,
          .width = kSlotCellWidth * block.memory_slices,
          .height = BlockHeight(diagram)};
}

std::string SlotDiagramSvg(const SlotDiagram& d) {
  const double row_h = BlockHeight(d);
  const double side_x = kSlotRowLeft + RowWidth(d) + kSideGap;
  const double height =
      std::max(kTop + row_h + 10, kTop + kHeaderLine * static_cast<double>(d.side.size()) + 10);
  std::string out = fmt::format(
      "<svg role=\"img\" class=\"slots\" viewBox=\"0 0 {:.0f} {:.0f}\" "
      "xmlns=\"http://www.w3.org/2000/svg\" font-family=\"sans-serif\" font-size=\"12\" "
      "fill=\"#1b1f24\"><title>{}</title>",
      side_x + kSideWidth, height, format::HtmlEscape(d.title));
  // The cells: every memory slice, numbered above; any a block covers is hidden under it.
  out += Text(kSlotRowLeft, 12, "memory slice", "fill=\"#4a5560\" font-size=\"11\"");
  for (int s = 0; s < d.memory_slices; ++s) {
    const double x = kSlotRowLeft + kSlotCellWidth * s;
    out += fmt::format(
        "<rect class=\"cell\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
        "fill=\"#f6f7f9\" stroke=\"#c3cad2\" stroke-dasharray=\"4 3\"/>",
        x, kTop, kSlotCellWidth, row_h);
    out += Text(x + kSlotCellWidth - 14, kTop - 4, std::to_string(s),
                "fill=\"#4a5560\" font-size=\"11\"");
    out += Text(x + 8, kTop + row_h - 8, "unused", "fill=\"#9aa3ad\" font-size=\"11\"");
  }
  for (std::size_t i = 0; i < d.blocks.size(); ++i) out += Block(d, d.blocks[i], i);
  for (std::size_t k = 0; k < d.side.size(); ++k) {
    out += Text(side_x, kTop + kHeaderLine * static_cast<double>(k + 1) - 4, d.side[k],
                k == 0 ? "font-weight=\"600\"" : "");
  }
  return out + "</svg>";
}

}  // namespace headroom::report
