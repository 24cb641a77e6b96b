#include "format/html.h"

#include <gtest/gtest.h>

namespace headroom::format {
namespace {

TEST(HtmlTest, EscapesEveryMarkupCharacter) {
  EXPECT_EQ(HtmlEscape(R"(<a href="x">T&C's</a>)"),
            "&lt;a href=&quot;x&quot;&gt;T&amp;C&#39;s&lt;/a&gt;");
  EXPECT_EQ(HtmlEscape("plain 80% text"), "plain 80% text");
}

TEST(HtmlTest, PageIsSelfContained) {
  const std::string page = HtmlPage("a <title>", "<p>body</p>");
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(page.find("<title>a &lt;title&gt;</title>"), std::string::npos);
  EXPECT_NE(page.find("<main>\n<p>body</p></main>"), std::string::npos);
  for (const char* external : {"http:", "https:", "<link", "<script", "@import"}) {
    EXPECT_EQ(page.find(external), std::string::npos) << external;
  }
}

constexpr const char* kGnuplotSvg = R"(<?xml version="1.0" encoding="utf-8"  standalone="no"?>
<svg 
 viewBox="0 0 800 480"
 xmlns="http://www.w3.org/2000/svg"
>
<title>Gnuplot</title>
<g id="gnuplot_canvas">
	<path id='gpPt7' d='M0,-1.33 L-1.33,0.67 z'/>
	<use xlink:href='#gpPt7' id='gpPt8'/>
	<g filter='url(#textbox)'/>
</g>
</svg>
)";

TEST(HtmlTest, InlineSvgDropsThePrologAndPrefixesIds) {
  auto svg = InlineSvg(kGnuplotSvg, "Row power & budget", "row-power");
  ASSERT_TRUE(svg) << svg.error().message();
  EXPECT_EQ(svg->rfind("<svg role=\"img\"", 0), 0u) << *svg;
  EXPECT_EQ(svg->substr(svg->size() - 6), "</svg>");
  EXPECT_NE(svg->find("<title>Row power &amp; budget</title>"), std::string::npos) << *svg;
  EXPECT_NE(svg->find(R"(id="row-power-gnuplot_canvas")"), std::string::npos) << *svg;
  EXPECT_NE(svg->find("id='row-power-gpPt7'"), std::string::npos) << *svg;
  EXPECT_NE(svg->find("href='#row-power-gpPt7' id='row-power-gpPt8'"), std::string::npos) << *svg;
  EXPECT_NE(svg->find("url(#row-power-textbox)"), std::string::npos) << *svg;
  EXPECT_EQ(svg->find("<?xml"), std::string::npos);
}

TEST(HtmlTest, InlineSvgRejectsWhatIsNotSvg) {
  auto svg = InlineSvg("gnuplot: unknown terminal", "t", "p");
  ASSERT_FALSE(svg);
  EXPECT_EQ(svg.error().code(), core::Code::kInvalidArgument);
}

}  // namespace
}  // namespace headroom::format
