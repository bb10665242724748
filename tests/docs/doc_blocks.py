"""The fenced code blocks of README.md and docs/*.md, with the docs-test marker written above each.

A marker is an HTML comment on the line right above the fence (invisible on GitHub):

    <!-- docs-test: skip: REASON -->        never run here; the reason is printed
    <!-- docs-test: needs: WHAT -->         run only where WHAT is present (bf16, a command, a Python module)

`sh` and `python` blocks run; a `yaml` block whose first line is `# NAME.yaml` is written to NAME.yaml
(the docs then run it); every other block (output, C++, CMake) is text.
"""
import re
from dataclasses import dataclass
from pathlib import Path

MARKER = re.compile(r"^<!--\s*docs-test:\s*(skip|needs):\s*(.+?)\s*-->\s*$")
FENCE = re.compile(r"^```(\S*)\s*$")


@dataclass
class Block:
    doc: str        # path relative to the repository root
    line: int       # 1-based line of the opening fence
    lang: str       # info string ("" when none)
    code: str
    skip: str = ""  # the reason, for `skip`
    needs: str = ""

    def where(self):
        return f"{self.doc}:{self.line} ({self.lang or 'text'})"


def blocks(root, doc):
    lines = (Path(root) / doc).read_text(encoding="utf-8").splitlines()
    out, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, body = i, []
        i += 1
        while i < len(lines) and lines[i].rstrip() != "```":
            body.append(lines[i])
            i += 1
        if i == len(lines):
            raise ValueError(f"{doc}:{start + 1}: code block never closed")
        b = Block(doc, start + 1, m.group(1), "\n".join(body) + "\n")
        above = lines[start - 1] if start > 0 else ""
        mk = MARKER.match(above)
        if mk:
            setattr(b, mk.group(1), mk.group(2))
        elif above.lstrip().startswith("<!--") and "docs-test" in above:
            raise ValueError(f"{doc}:{start}: malformed docs-test marker: {above}")
        out.append(b)
        i += 1
    return out


def runnable(b):
    return b.lang in ("sh", "python") or (b.lang == "yaml" and yaml_file_name(b) is not None)


def yaml_file_name(b):
    m = re.match(r"#\s*(\S+\.ya?ml)\s*$", b.code.splitlines()[0]) if b.code.strip() else None
    return m.group(1) if m else None


def documents(root):
    """README.md first (a new user's order), then docs/*.md alphabetically."""
    return ["README.md"] + sorted(str(p.relative_to(root)) for p in (Path(root) / "docs").glob("*.md"))
