#!/usr/bin/env python3
"""Plain-SVG bar chart of the comparison (no third-party libraries).

    python3 Benchmarks/chart.py [Benchmarks/results/comparison.json [OUT.svg]]

Horizontal bars of MB/s, one group for the tweet mapping and one for the identity mapping; streammap's bars are
highlighted, the C baselines are drawn hatched-grey, a wrong output is marked. compare.py calls write_svg().
"""
import json
import os
import sys
from xml.sax.saxutils import escape

COLORS = {"streammap": "#d9480f", "baseline": "#868e96", "peer": "#1c7ed6"}


def write_svg(data, path):
    groups = [("mapping", "Tweet mapping (specs/tweets.spec.json)"), ("identity", "Identity and wide mappings (every value re-emitted; unmapped: keep + two renames)")]
    tools = data["tools"]
    width, label_w, row_h, gap = 980, 330, 26, 36
    bar_w = width - label_w - 250
    rows = sum(1 for t in tools if t["group"] in dict(groups))
    height = 70 + rows * row_h + len(groups) * gap + 50
    top = max((t["mb_per_s"] for t in tools), default=1) or 1
    scale = bar_w / top
    out = []
    out.append('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
               'font-family="Helvetica, Arial, sans-serif" font-size="13">' % (width, height, width, height))
    out.append('<rect width="100%" height="100%" fill="white"/>')
    out.append('<text x="16" y="26" font-size="17" font-weight="bold">StreamMap vs peers: MB/s of NDJSON input (higher is better)</text>')
    out.append('<text x="16" y="46" fill="#555">%s MB corpus, median of %s rounds, %s (%s cores). '
               'Absolute figures vary by machine; ratios within one run compare.</text>' % (
                   escape("%.0f" % (data["corpus_bytes"] / 1e6)), data["rounds"], escape(data["machine"]["cpu"]), data["machine"]["cores"]))
    base = {t["group"]: t["mb_per_s"] for t in tools if t["role"] in ("ceiling", "baseline")}
    y = 70
    for key, title in groups:
        members = sorted([t for t in tools if t["group"] == key], key=lambda t: -t["mb_per_s"])
        if not members:
            continue
        y += 8
        out.append('<text x="16" y="%d" font-weight="bold">%s</text>' % (y + 12, escape(title)))
        y += gap - 14
        for t in members:
            kind = "streammap" if t["key"].startswith(("streammap", "identity", "keep", "computed")) else ("baseline" if t["role"] in ("ceiling", "baseline") else "peer")
            w = max(1.0, t["mb_per_s"] * scale)
            out.append('<text x="%d" y="%d" text-anchor="end">%s</text>' % (label_w - 8, y + 17, escape(t["label"])))
            out.append('<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s" rx="2"/>' % (label_w, y + 4, w, row_h - 8, COLORS[kind]))
            note = "%.1f MB/s" % t["mb_per_s"]
            if base.get(key) and t["role"] not in ("ceiling", "baseline"):
                vs = t.get("vs_base") or t["mb_per_s"] / base[key]  # paired per round (compare.py), else MB/s
                note += " · %.2f× %s" % (vs, "ceiling" if key == "mapping" else "yajl_gen")
            if t.get("peak_rss_mib") == t.get("peak_rss_mib"):  # not NaN
                note += " · %.0f MiB" % t["peak_rss_mib"]
            if t.get("correct") is False:
                note += " · output wrong"
            out.append('<text x="%.1f" y="%d" fill="%s">%s</text>' % (label_w + w + 6, y + 17, "#c92a2a" if t.get("correct") is False else "#222", escape(note)))
            y += row_h
        y += 6
    y += 14
    lx = 16
    for name, color in (("streammap", COLORS["streammap"]), ("C on yajl (ceiling / baseline)", COLORS["baseline"]), ("peers", COLORS["peer"])):
        out.append('<rect x="%d" y="%d" width="12" height="12" fill="%s"/>' % (lx, y, color))
        out.append('<text x="%d" y="%d">%s</text>' % (lx + 18, y + 11, escape(name)))
        lx += 40 + 7 * len(name)
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    here = os.path.dirname(os.path.abspath(__file__))
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "results", "comparison.json")
    dst = sys.argv[2] if len(sys.argv) > 2 else os.path.splitext(src)[0] + ".svg"
    with open(src) as f:
        write_svg(json.load(f), dst)
