#!/usr/bin/env python3
"""Checks the import graph of windlass-server's modules.

A file imports another when it names an item of that file's module in a
`use` or in a path in its code (`crate::run::launch::Launch`,
`super::log::EventLog`, `run::keep_leases` in a parent module); a `mod`
declaration alone is containment, not an import. Unit-test modules
(`#[cfg(test)]` to the end of the file) are left out.

Fails (exit 1) when
- a circle of imports goes through more than two files, or
- a route file (`http/<x>.rs`) imports another route file: code two routes
  share belongs in `intake.rs`, `run/`, `guard/` or a small shared module.

Usage: scripts/import-graph-server.py [SRC_DIR] [--print]
"""

import re
import sys
from pathlib import Path


def module_path(src: Path, file: Path) -> tuple:
    rel = file.relative_to(src).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] in ("lib", "mod"):
        parts = parts[:-1]
    return tuple(parts)


def strip(text: str) -> str:
    """Code without comments, string literals and the unit tests."""
    cut = re.search(r"#\[cfg\(test\)\]\s*(#\[[^\]]*\]\s*)*mod\s+\w+", text)
    if cut:
        text = text[: cut.start()]
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r'r#*"(?:.|\n)*?"#*', '""', text)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    text = re.sub(r"'(?:\\.|[^'\\])'", "''", text)
    return text


def expand(tree: str) -> list:
    """`a::{b, c::{d, e}}` -> ['a::b', 'a::c::d', 'a::c::e']."""
    tree = re.sub(r"\s+", "", tree)
    brace = tree.find("{")
    if brace < 0:
        return [tree]
    prefix = tree[:brace]
    inner = tree[brace + 1 : tree.rindex("}")]
    items, depth, start = [], 0, 0
    for i, ch in enumerate(inner):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(inner[start:i])
            start = i + 1
    items.append(inner[start:])
    out = []
    for item in filter(None, items):
        out.extend(prefix + p for p in expand(item))
    return out


def paths_in(code: str) -> list:
    found = []
    for m in re.finditer(r"\buse\s+([^;]+);", code):
        found.extend(expand(m.group(1)))
    # Paths in code: two or more segments joined by `::`.
    without_uses = re.sub(r"\buse\s+[^;]+;", "", code)
    for m in re.finditer(r"(?<![\w:])((?:\w+::)+\w+)", without_uses):
        found.append(m.group(1))
    return found


def resolve(path: str, here: tuple, modules: dict):
    segs = [s for s in re.split(r"::", path) if s and s != "*"]
    segs = [re.sub(r"\bas\b.*$", "", s) for s in segs]
    if not segs:
        return None
    if segs[0] == "crate":
        base, rest = (), segs[1:]
    elif segs[0] == "self":
        base, rest = here, segs[1:]
    elif segs[0] == "super":
        base, rest = here, segs
        while rest and rest[0] == "super":
            base, rest = base[:-1], rest[1:]
    elif here + (segs[0],) in modules:
        base, rest = here, segs
    else:
        return None  # another crate, a type's associated item, a local name
    target = base
    for seg in rest:
        if target + (seg,) in modules:
            target = target + (seg,)
        else:
            break
    return target


def graph(src: Path) -> dict:
    # `foo_tests.rs` files are `#[path]` test modules of `foo.rs`.
    files = sorted(f for f in src.rglob("*.rs") if not f.stem.endswith("_tests"))
    modules = {module_path(src, f): f for f in files}
    edges = {}
    for mod, file in modules.items():
        code = strip(file.read_text())
        targets = set()
        for p in paths_in(code):
            t = resolve(p, mod, modules)
            if t is not None and t != mod:
                targets.add(t)
        edges[mod] = targets
    return edges


def long_cycles(edges: dict) -> list:
    """Simple cycles through more than two files (one per starting node)."""
    found = []
    nodes = sorted(edges)
    order = {n: i for i, n in enumerate(nodes)}
    for start in nodes:
        # Cycles whose smallest node is `start`, so each is found once.
        stack = [(start, [start])]
        while stack:
            node, trail = stack.pop()
            for nxt in edges.get(node, ()):
                if nxt == start and len(trail) > 2:
                    found.append(trail + [start])
                elif nxt not in trail and order.get(nxt, -1) > order[start]:
                    stack.append((nxt, trail + [nxt]))
            if len(found) > 20:
                return found
    return found


def name(mod: tuple) -> str:
    return "/".join(mod) or "lib"


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    src = Path(args[0] if args else "crates/windlass-server/src")
    edges = graph(src)
    if "--print" in sys.argv:
        for mod in sorted(edges):
            print(f"{name(mod)} -> {', '.join(sorted(map(name, edges[mod])))}")
    bad = 0
    for cycle in long_cycles(edges):
        print("circle:", " -> ".join(map(name, cycle)))
        bad += 1
    for mod, targets in sorted(edges.items()):
        if len(mod) == 2 and mod[0] == "http":
            for t in sorted(targets):
                if len(t) == 2 and t[0] == "http":
                    print(f"route imports a route: {name(mod)} -> {name(t)}")
                    bad += 1
    two = sorted(
        {tuple(sorted((a, b))) for a in edges for b in edges[a] if a in edges.get(b, ())}
    )
    print(
        f"{len(edges)} files, {sum(map(len, edges.values()))} imports, "
        f"{len(two)} two-file circles, {bad} problems"
    )
    for a, b in two:
        print(f"  two-file circle: {name(a)} <-> {name(b)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
