// SPDX-License-Identifier: MIT
// Pieces of npusim's self-contained HTML pages (the sweep's page, a run's --html report, the
// compare page): the shared CSS, the JS helpers that draw inline SVG charts (el, fmt, niceTicks,
// frame), HTML escaping and embedding JSON data in a <script> element. No network, no library.
#pragma once
#include <string>

namespace htmlkit {

extern const char* const kStyle;
/// Global JS functions: el(tag, attrs, parent, text) makes an SVG element; fmt(v) a short number;
/// niceTicks(lo, hi, n); frame(parent, cls, title, xs, ys, xcat, xname, yname, opts) draws axes
/// and returns {svg, sx, sy} (opts: W, H, logx, logy).
extern const char* const kHelpers;
std::string escape(const std::string& s);
/// JSON made safe inside <script type="application/json"> ("</" escaped).
std::string embed_json(std::string json);

}  // namespace htmlkit
