"""Pictures drawn by a headless Chromium: the bundled mermaid.js renders a diagram to SVG, and Chromium paints an
SVG onto a canvas for its PNG. Nothing is fetched: the page carries mermaid.js itself, and the browser starts with its
network features off and a fresh profile that is removed afterwards.

mermaid.js (MIT, `assets/mermaid.LICENSE`) is npm's `mermaid` package's `dist/mermaid.min.js`, version
`MERMAID_VERSION`, shipped in the wheel. Chromium is the user's: the first of `BROWSERS` on PATH.
"""

from __future__ import annotations

import base64
import html
import math
import re
import shutil
import tempfile
from functools import cache
from importlib import resources
from pathlib import Path

from orchestrator.errors import AutobuildError, InputError
from orchestrator.processes import run

MERMAID_VERSION = "11.17.2"
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")
"""Chromium by its Debian/Ubuntu names, or Google Chrome (same engine, same flags)."""
APPS = ("/Applications/Chromium.app/Contents/MacOS/Chromium",
        "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome")
"""Where macOS keeps them when none is on PATH."""
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--hide-scrollbars", "--mute-audio")
RENDER_TIMEOUT_S = 90.0
"""One browser start and one diagram: a few seconds; a wedged browser is killed (its process group) here."""
PNG_SCALE = 2
"""Device pixels per CSS pixel in a PNG: sharp on a high-density screen and when zoomed."""
CANVAS_SIDE, CANVAS_AREA = 32_767, 268_435_456
"""Chromium's largest canvas (pixels a side, pixels in all): a larger plan's PNG takes fewer pixels per CSS pixel."""
_BEGIN, _END, _FAILED = "AUTOBUILD-SVG-BEGIN", "AUTOBUILD-SVG-END", "AUTOBUILD-RENDER-FAILED"
_VIEWBOX = re.compile(r'viewBox="[-\d.]+ [-\d.]+ ([\d.]+) ([\d.]+)"')


class RenderError(AutobuildError):
    """The browser ran but gave no picture (a diagram mermaid.js refused, a browser that failed): exit 1."""


@cache
def mermaid_js() -> str:
    """The bundled mermaid.min.js, safe inside an inline <script> element (made once: ~3 MB, in every report)."""
    source = (resources.files("orchestrator.views") / "assets" / "mermaid.min.js").read_text(encoding="utf-8")
    return script_text(source)


def script_text(source: str) -> str:
    """`source` safe inside an inline <script> element (no `</script` can end it early)."""
    return source.replace("</script", "<\\/script").replace("<!--", "<\\!--")


def find_browser() -> str | None:
    """The Chromium to draw with: the first of `BROWSERS` on PATH, else of `APPS` installed."""
    on_path = next((found for name in BROWSERS if (found := shutil.which(name))), None)
    return on_path or next((app for app in APPS if Path(app).is_file()), None)


def _browser() -> str:
    found = find_browser()
    if found is None:
        raise InputError("drawing SVG or PNG needs Chromium (or Google Chrome) on PATH, as one of "
                         f"{', '.join(BROWSERS)}: install it (Debian/Ubuntu: `apt-get install chromium`), or use"
                         " `--format mermaid` (text) or `--format html` (opens in any browser)")
    return found


def _run_browser(page: str, *extra: str) -> str:
    """Load `page` (HTML) in a headless Chromium with a profile of its own; its stdout."""
    with tempfile.TemporaryDirectory(prefix="autobuild-chromium-") as scratch:
        folder = Path(scratch)
        (folder / "page.html").write_text(page, encoding="utf-8")
        done = run([_browser(), *FLAGS, f"--user-data-dir={folder / 'profile'}", *extra,
                    (folder / "page.html").as_uri()], folder, timeout=RENDER_TIMEOUT_S)
        if done.timed_out:
            raise RenderError(f"Chromium did not finish drawing within {RENDER_TIMEOUT_S:.0f} s")
        if not done.ok and not done.stdout:
            raise RenderError(f"Chromium failed (exit {done.returncode}): {done.tail(5)}")
        return done.stdout


def render_svg(diagram: str) -> str:
    """The SVG (a standalone XML document) mermaid.js draws for `diagram`. Flowchart labels are HTML inside the SVG
    (`foreignObject`), as GitHub draws them: mermaid.js's SVG-text labels show entity codes (`#34;`) literally."""
    page = f"""<!doctype html><html><head><meta charset="utf-8"><script>{mermaid_js()}</script></head>
<body><pre id="diagram">{html.escape(diagram)}</pre><script>
mermaid.initialize({{startOnLoad: false, securityLevel: "strict"}});
const done = (text) => {{
  document.querySelectorAll("script").forEach((element) => element.remove());
  document.body.textContent = text;
}};
mermaid.render("autobuild", document.getElementById("diagram").textContent).then(({{svg}}) => {{
  const holder = document.createElement("div");
  holder.innerHTML = svg;
  done("{_BEGIN}" + new XMLSerializer().serializeToString(holder.querySelector("svg")) + "{_END}");
}}).catch((error) => done("{_FAILED} " + error));
</script></body></html>"""
    out = _run_browser(page, "--virtual-time-budget=30000", "--dump-dom")
    begin, end = out.find(_BEGIN), out.rfind(_END)
    if begin < 0 or end < begin:
        failed = out.find(_FAILED)
        reason = html.unescape(out[failed + len(_FAILED):].split("<", 1)[0]).strip() if failed >= 0 else (
            "no picture in the page")
        raise RenderError(f"mermaid.js could not draw the diagram: {reason[:300]}")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + html.unescape(out[begin + len(_BEGIN):end]) + "\n"


def svg_size(svg: str) -> tuple[int, int]:
    """The SVG's width and height in CSS pixels, from its viewBox."""
    match = _VIEWBOX.search(svg)
    if match is None:
        return 800, 600
    return max(1, math.ceil(float(match.group(1)))), max(1, math.ceil(float(match.group(2))))


def render_png(svg: str) -> bytes:
    """`svg` as a PNG on white, `PNG_SCALE` device pixels per CSS pixel (fewer past a canvas's limits), painted whole
    by the page itself.

    Not a screenshot: Chromium's `--screenshot` fires at the load event while tiles are still being painted, so a
    large picture came out with its last tiles blank (measured: plans of 30 to 62 tasks, about one run in four).
    Here the page waits until the picture has loaded and the fonts are ready, draws it onto a canvas (which paints
    all of it, at once) and hands the canvas's PNG back in the DOM, between markers: no marker, no file."""
    width, height = svg_size(svg)
    scale = min(PNG_SCALE, CANVAS_SIDE / width, CANVAS_SIDE / height, math.sqrt(CANVAS_AREA / (width * height)))
    data = base64.b64encode(svg.encode()).decode()
    page = f"""<!doctype html><html><head><meta charset="utf-8"></head><body><script>
const done = (text) => {{ document.body.textContent = text; }};
const picture = new Image();
const loaded = new Promise((resolve, reject) => {{ picture.onload = resolve; picture.onerror = reject; }});
picture.src = "data:image/svg+xml;base64,{data}";
// A loading image is a fetch, which Chromium's virtual time waits for; drawImage then paints all of it at once.
Promise.all([loaded, document.fonts.ready]).then(() => {{
  const canvas = document.createElement("canvas");
  canvas.width = {math.floor(width * scale)};
  canvas.height = {math.floor(height * scale)};
  const context = canvas.getContext("2d");
  context.fillStyle = "#fff";
  context.fillRect(0, 0, canvas.width, canvas.height);
  context.drawImage(picture, 0, 0, canvas.width, canvas.height);
  const png = canvas.toDataURL("image/png");
  done(png.startsWith("data:image/png;base64,") ? "{_BEGIN}" + png.slice(22) + "{_END}"
       : "{_FAILED} the picture is too large for a canvas");
}}).catch((error) => done("{_FAILED} " + error));
</script></body></html>"""
    out = _run_browser(page, "--virtual-time-budget=30000", "--dump-dom")
    begin, end = out.find(_BEGIN), out.rfind(_END)
    if begin < 0 or end < begin:
        failed = out.find(_FAILED)
        reason = out[failed + len(_FAILED):].split("<", 1)[0].strip() if failed >= 0 else "no picture in the page"
        raise RenderError(f"Chromium could not paint the PNG: {reason[:300]}")
    return base64.b64decode(out[begin + len(_BEGIN):end])
