"""Headless Chromium (Debian's `chromium`, installed by `make install`) as a test oracle: load a file as a person's
browser would and read back the DOM after its scripts ran. A fresh profile per call, network features off."""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync")


def binary() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def dump_dom(page: Path) -> str:
    """The DOM of `page` once its scripts are done (virtual time: Chromium waits for the page's own work, not a
    clock), serialized as HTML."""
    found = binary()
    assert found, "Chromium is missing: `make install` installs Debian's chromium"
    with tempfile.TemporaryDirectory(prefix="chromium-test-") as profile:
        done = subprocess.run([found, *FLAGS, f"--user-data-dir={profile}", "--virtual-time-budget=30000",
                               "--dump-dom", page.resolve().as_uri()], capture_output=True, text=True, timeout=120,
                              check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def blank_points(png: Path, points: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The `points` (device pixels) where `png` is blank (white or transparent), as a browser reads the file back:
    Chromium draws it onto a canvas and reads each pixel."""
    data = base64.b64encode(png.read_bytes()).decode()
    with tempfile.TemporaryDirectory(prefix="chromium-png-") as folder:
        page = Path(folder) / "read.html"
        page.write_text(f"""<!doctype html><body><script>
const picture = new Image();
picture.onload = () => {{
  const canvas = document.createElement("canvas");
  canvas.width = picture.naturalWidth;
  canvas.height = picture.naturalHeight;
  const context = canvas.getContext("2d");
  context.drawImage(picture, 0, 0);
  const blank = {json.dumps(points)}.filter(([x, y]) => {{
    const [r, g, b, a] = context.getImageData(x, y, 1, 1).data;
    return a === 0 || (r > 250 && g > 250 && b > 250);
  }});
  document.body.textContent = "BLANK=" + JSON.stringify(blank) + "=END";
}};
picture.src = "data:image/png;base64,{data}";
</script></body>""")
        dom = dump_dom(page)
    found = re.search(r"BLANK=(.*?)=END", dom)
    assert found, dom[-2000:]
    return [(x, y) for x, y in json.loads(found.group(1))]
