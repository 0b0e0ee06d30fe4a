#!/usr/bin/env python3
"""Every results file or folder the docs name exists.

Scans README.md, docs/*.md and bench/results/README.md for paths under bench/results/: written
out anywhere in the text (in backticks, in a command, in prose) and as the targets of markdown
links, which are resolved relative to the file that holds them (so bench/results/README.md's
links to its own folders count). Brace forms are expanded (`{a,b}.md`, `tcp4_64M_{1..6}.md`);
a path with a wildcard (`*`, `?`, a `<placeholder>`) must match at least one entry. Anchors
(`#section`) are dropped.

bench/results/README.md also names its files relative to bench/results/ or to the folder a
section is about: there a backticked name that ends in .json, .md, .txt, .png, `.*` or `/`
(`sweep_2ranks_shm.json`, `small_1x2.*`, `auto/`) must exist in bench/results/, in the folder
its `## ` heading names (the first backticked or leading name of the heading that is a folder
of bench/results/), or below that folder; `<placeholder>`, `...` and `…` match anything. A name
whose first folder is one of the repository's (`docs/`, `plots/`...) is not a result: skipped.

Prints how many paths it checked; exits 1 listing FILE:LINE and the path for each one that does
not exist.

Usage: docs_results_exist.py [REPOSITORY_ROOT]   (default: two levels above this script)
"""
import glob
import os
import re
import sys

RESULTS = "bench/results"
# A path starts at bench/results/ and runs until whitespace, a quote, a backtick or a bracket.
PATH_RE = re.compile(r"(?<![\w/.-])(?:\./)?(bench/results(?:/[^\s`'\"()\[\]|]*)?)")
LINK_RE = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
BRACE_RE = re.compile(r"\{([^{}]*)\}")
TICK_RE = re.compile(r"`([^`]+)`")
RELATIVE_NAME_RE = re.compile(r"^[A-Za-z0-9_*?{}<>…,+-][A-Za-z0-9_.*?{}<>…,+-]*"
                              r"(/[A-Za-z0-9_.*?{}<>…,+-]*)*$")
RELATIVE_END_RE = re.compile(r"(\.(json|md|txt|png)|\.\*|/)$")


def expand_braces(text):
    """`a{b,c}d` -> [abd, acd]; `x{1..3}` -> [x1, x2, x3]; nested and repeated groups too."""
    match = BRACE_RE.search(text)
    if not match:
        return [text]
    body = match.group(1)
    head, tail = text[: match.start()], text[match.end():]
    numeric = re.fullmatch(r"(-?\d+)\.\.(-?\d+)", body)
    if numeric:
        first, last = int(numeric.group(1)), int(numeric.group(2))
        step = 1 if last >= first else -1
        options = [str(n) for n in range(first, last + step, step)]
    elif "," in body:
        options = body.split(",")
    else:  # not a brace form: keep the braces literally
        return [head + "{" + body + "}" + t for t in expand_braces(tail)]
    return [e for option in options for e in expand_braces(head + option + tail)]


def clean(path):
    """Drops an anchor and the punctuation that ends a sentence or a clause around a path."""
    path = path.split("#", 1)[0]
    while path and path[-1] in ".,;:!":
        path = path[:-1]
    return path


def exists(root, path):
    pattern = re.sub(r"<[^<>]*>", "*", path).replace("…", "*").replace("...", "*")
    if any(ch in pattern for ch in "*?["):
        return bool(glob.glob(os.path.join(root, pattern), recursive=True))
    return os.path.exists(os.path.join(root, pattern))


def section_folder(root, heading):
    """The folder of bench/results/ a `## ` heading is about, or None."""
    names = TICK_RE.findall(heading) + re.findall(r"^##\s+([\w.-]+)", heading)
    for name in names:
        name = name.strip().rstrip("/")
        if name and os.path.isdir(os.path.join(root, RESULTS, name)):
            return name
    return None


def relative_names(root, relative_file):
    """Yields (line number, [candidate paths]) for the names bench/results/README.md gives
    relative to bench/results/ or to its section's folder; one candidate must exist."""
    folder = None
    with open(os.path.join(root, relative_file), encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if line.startswith("## "):
                folder = section_folder(root, line)
            for token in TICK_RE.findall(line):
                token = token.strip()
                if (token.startswith((".", "-")) or " " in token
                        or not RELATIVE_NAME_RE.match(token) or not RELATIVE_END_RE.search(token)):
                    continue
                first = token.split("/", 1)[0]
                if ("/" in token and os.path.isdir(os.path.join(root, first))
                        and not os.path.exists(os.path.join(root, RESULTS, first))):
                    continue  # a path of the repository (docs/, plots/, bench/...), not a result
                for name in expand_braces(token):
                    candidates = [os.path.join(RESULTS, name)]
                    if folder:
                        candidates += [os.path.join(RESULTS, folder, name),
                                       os.path.join(RESULTS, folder, "**", name)]
                    yield number, candidates


def named_paths(root, relative_file):
    """Yields (line number, path relative to the root) for every results path the file names."""
    directory = os.path.dirname(relative_file)
    with open(os.path.join(root, relative_file), encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            found = []
            for match in PATH_RE.finditer(line):
                found.append(match.group(1))
            for match in LINK_RE.finditer(line):
                target = match.group(1)
                if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                    continue  # a URL or an anchor in the same file
                resolved = os.path.normpath(os.path.join(directory, target.split("#", 1)[0]))
                if resolved == RESULTS or resolved.startswith(RESULTS + "/"):
                    found.append(resolved + ("/" if target.split("#", 1)[0].endswith("/") else ""))
            seen = set()
            for raw in found:
                for path in expand_braces(clean(raw)):
                    path = clean(path)
                    if path and path not in seen:
                        seen.add(path)
                        yield number, path


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.join(os.path.dirname(__file__), "..", ".."))
    files = ["README.md"]
    files += sorted(os.path.relpath(p, root) for p in glob.glob(os.path.join(root, "docs", "*.md")))
    files.append(os.path.join(RESULTS, "README.md"))
    checked, missing, distinct = 0, [], set()
    for relative_file in files:
        if not os.path.exists(os.path.join(root, relative_file)):
            missing.append(f"{relative_file}: the file to scan does not exist")
            continue
        for number, path in named_paths(root, relative_file):
            checked += 1
            distinct.add(path)
            if not exists(root, path):
                missing.append(f"{relative_file}:{number}: {path} does not exist")
        if relative_file == os.path.join(RESULTS, "README.md"):
            for number, candidates in relative_names(root, relative_file):
                checked += 1
                distinct.add(candidates[-1])
                if not any(exists(root, c) for c in candidates):
                    where = " nor ".join(c for c in candidates if "**" not in c)
                    missing.append(f"{relative_file}:{number}: neither {where} exists"
                                   if len(candidates) > 1 else
                                   f"{relative_file}:{number}: {candidates[0]} does not exist")
    print(f"docs_results_exist: {checked} named results paths ({len(distinct)} distinct) "
          f"in {len(files)} files checked")
    if missing:
        print(f"docs_results_exist: {len(missing)} missing:")
        for line in missing:
            print(f"  {line}")
        return 1
    print("docs_results_exist: every named results file and folder exists")
    return 0


if __name__ == "__main__":
    sys.exit(main())
