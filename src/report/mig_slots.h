// A MIG layout drawn as slots: the GPU's memory slices as a row of cells (MIG placements are
// given in memory slices), each GPU instance a labelled block over the cells its placement
// covers, with lines of text in it (the jobs it runs, in order), and a few lines of figures beside
// the row. Built by hand as inline SVG rather than by gnuplot: the drawing is boxes and text at
// computed positions, which gnuplot can only approximate with objects and labels, with no clipping
// of a long job name to its block (nested <svg> elements clip here). All text is escaped. Pure;
// thread-compatible.
#ifndef HEADROOM_REPORT_MIG_SLOTS_H_
#define HEADROOM_REPORT_MIG_SLOTS_H_

#include <string>
#include <vector>

namespace headroom::report {

// One GPU instance (or the whole GPU with MIG off) as drawn.
struct SlotBlock {
  std::string label = {};               // "3g.71gb@0", "whole GPU (MIG off)"
  std::string detail = {};              // second line, e.g. "3/7 compute, 71 GiB"
  int start = 0;                        // first memory slice of the placement
  int memory_slices = 0;                // cells covered
  std::vector<std::string> lines = {};  // below the label: e.g. its jobs in run order
};

struct SlotDiagram {
  std::string title = {};  // the SVG's <title>, read by screen readers
  int memory_slices = 0;   // cells in the row (8 on A100, H100, H200)
  std::vector<SlotBlock> blocks = {};
  std::vector<std::string> side = {};  // lines beside the row: name, throughput, energy
};

// Where a block sits, in the SVG's user units (its viewBox).
struct SlotBox {
  double x = 0;
  double y = 0;
  double width = 0;
  double height = 0;
};

// The drawing's size and geometry: a cell is kSlotCellWidth wide; the row starts at
// kSlotRowLeft; blocks are as tall as the most lines any block holds needs.
inline constexpr double kSlotCellWidth = 110;
inline constexpr double kSlotRowLeft = 10;

SlotBox SlotBlockBox(const SlotDiagram& diagram, const SlotBlock& block);

// The <svg> element (role="img", a <title>, a viewBox, no id) ready to sit inside HTML. Cells
// no block covers are drawn as unused. Blocks are <g class="gi"> holding a <rect class="gi">.
std::string SlotDiagramSvg(const SlotDiagram& diagram);

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_MIG_SLOTS_H_
