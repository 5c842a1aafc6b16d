"""A report as a list of blocks, rendered to Markdown (tables with tabulate, plots as linked PNG
files) or to one self-contained HTML file (plots embedded as data URIs, no network needed)."""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass, field
from pathlib import Path

from tabulate import tabulate


@dataclass
class Block:
    kind: str  # "h1", "h2", "h3", "p", "table", "img"
    text: str = ""
    headers: list[str] = field(default_factory=list)
    rows: list[list] = field(default_factory=list)
    png: bytes | None = None
    name: str = ""


class Document:
    def __init__(self, title: str):
        self.blocks: list[Block] = [Block("h1", title)]

    def h2(self, text: str) -> None:
        self.blocks.append(Block("h2", text))

    def h3(self, text: str) -> None:
        self.blocks.append(Block("h3", text))

    def p(self, text: str) -> None:
        self.blocks.append(Block("p", text))

    def table(self, headers: list[str], rows: list[list]) -> None:
        self.blocks.append(Block("table", headers=headers, rows=rows))

    def img(self, png: bytes | None, name: str, alt: str) -> None:
        if png:
            self.blocks.append(Block("img", alt, png=png, name=name))

    @property
    def images(self) -> list[Block]:
        return [b for b in self.blocks if b.kind == "img"]

    def markdown(self, plots_dir: Path | None = None, link_prefix: str = "") -> str:
        out = []
        for b in self.blocks:
            if b.kind in ("h1", "h2", "h3"):
                out += ["#" * int(b.kind[1]) + " " + b.text, ""]
            elif b.kind == "p":
                out += [b.text, ""]
            elif b.kind == "table":
                out += [tabulate(b.rows, headers=b.headers, tablefmt="github") if b.rows else "_(none)_", ""]
            elif b.kind == "img" and plots_dir is not None:
                plots_dir.mkdir(parents=True, exist_ok=True)
                (plots_dir / f"{b.name}.png").write_bytes(b.png)
                out += [f"![{b.text}]({link_prefix}{b.name}.png)", ""]
        return "\n".join(out)

    def html(self) -> str:
        body = []
        for b in self.blocks:
            if b.kind in ("h1", "h2", "h3"):
                body.append(f"<{b.kind}>{html.escape(b.text)}</{b.kind}>")
            elif b.kind == "p":
                body.append(f"<p>{_inline(b.text)}</p>")
            elif b.kind == "table":
                body.append(tabulate(b.rows, headers=b.headers, tablefmt="html") if b.rows
                            else "<p><em>(none)</em></p>")
            elif b.kind == "img":
                data = base64.b64encode(b.png).decode()
                body.append(f'<figure><img class="plot" alt="{html.escape(b.text)}" src="data:image/png;base64,{data}">'
                            f"<figcaption>{html.escape(b.text)}</figcaption></figure>")
        return HTML_PAGE.format(title=html.escape(self.blocks[0].text), body="\n".join(body))


def _inline(text: str) -> str:
    # `code` spans are the only inline markup the report uses
    parts = html.escape(text).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))


HTML_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }}
table {{ border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.85em; }}
th, td {{ border: 1px solid #ccc; padding: 3px 7px; text-align: right; }}
th {{ background: #f0f0f0; }} td:first-child, th:first-child {{ text-align: left; }}
figure {{ margin: 1em 0 2em; }} img.plot {{ max-width: 100%; border: 1px solid #ddd; }}
code {{ background: #f4f4f4; padding: 0 3px; }}
</style></head>
<body>
{body}
</body></html>
"""
