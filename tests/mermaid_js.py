"""The real mermaid.js (11.x, run in QuickJS by the `mermaidx` package: no browser, no network) as a test oracle:
render a diagram the way GitHub does and read back what it drew. A syntax error fails the render."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import mermaidx

FENCE = re.compile(r"^```mermaid\n(.*?)^```$", re.S | re.M)


def blocks(markdown: str) -> list[str]:
    """The ```mermaid blocks of a Markdown document."""
    return FENCE.findall(markdown)


def render(source: str) -> ET.Element:
    """The SVG mermaid.js draws for `source` (raises on any parse or render error)."""
    return ET.fromstring(mermaidx.render(source).svg())


def _tagged(root: ET.Element, tag: str) -> list[ET.Element]:
    """Every element named `tag`, whatever its namespace."""
    return [element for element in root.iter() if element.tag.rsplit("}", 1)[-1] == tag]


def _classes(element: ET.Element) -> list[str]:
    return (element.get("class") or "").split()


@dataclass
class DrawnFlowchart:
    labels: dict[str, list[str]]
    """Mermaid node id → the text pieces of its label (one per line)."""
    classes: dict[str, set[str]]
    edges: list[tuple[str, str]]
    scripts: int


def flowchart(source: str) -> DrawnFlowchart:
    svg = render(source)
    labels: dict[str, list[str]] = {}
    classes: dict[str, set[str]] = {}
    for group in _tagged(svg, "g"):
        match = re.fullmatch(r".*flowchart-(.+)-\d+", group.get("id") or "")
        if "node" in _classes(group) and match:
            label = next(el for el in group.iter() if "nodeLabel" in _classes(el))
            labels[match.group(1)] = ["".join(piece) for piece in _lines(label)]
            classes[match.group(1)] = set(_classes(group)) - {"node", "default"}
    edges = []
    for path in _tagged(svg, "path"):
        match = re.fullmatch(r"L_(.+?)_(.+?)_\d+", path.get("data-id") or "")
        if "flowchart-link" in _classes(path) and match:
            edges.append((match.group(1), match.group(2)))
    return DrawnFlowchart(labels, classes, edges, len(_tagged(svg, "script")))


def _lines(label: ET.Element) -> list[list[str]]:
    """A label's text split at its <br/>s."""
    lines: list[list[str]] = [[]]
    for element in label.iter():
        if element.tag.rsplit("}", 1)[-1] == "br":
            lines.append([element.tail or ""])
        elif element.text:
            lines[-1].append(element.text)
    return lines


@dataclass
class DrawnBar:
    number: int
    """Its place among the chart's bars and milestones, in the order of the source."""
    label: str
    milestone: bool
    x: float
    width: float

    @property
    def at(self) -> float:
        """Where its start sits on the time axis (a milestone is drawn centred on its time)."""
        return self.x + self.width / 2 if self.milestone else self.x


def gantt(source: str) -> tuple[list[str], list[DrawnBar]]:
    """The section names and the bars of a Gantt chart, in source order."""
    svg = render(source)
    texts = {el.get("id"): "".join(el.itertext()).strip() for el in _tagged(svg, "text") if el.get("id")}
    bars = []
    for rect in _tagged(svg, "rect"):
        match = re.fullmatch(r".*-task(\d+)", rect.get("id") or "")
        if "task" in _classes(rect) and match:
            bars.append(DrawnBar(int(match.group(1)), texts.get(f"{rect.get('id')}-text", ""), "milestone" in
                                 _classes(rect), float(rect.get("x") or 0), float(rect.get("width") or 0)))
    sections = ["".join(el.itertext()) for el in _tagged(svg, "tspan")]
    return sections, sorted(bars, key=lambda bar: bar.number)
