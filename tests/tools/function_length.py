#!/usr/bin/env python3
"""No function in core/ (core/src and core/app) is longer than a limit (issue 21: 100 lines).

    function_length.py [--limit N] [--list] PATH...     every .cpp/.hpp/.cu/.cuh/.h under each PATH
    function_length.py --self-test FIXTURE              the detector against a fixture's expected lengths

A function's length is the count of lines from the first line of its declaration to the line of its closing
brace, blank lines included. Functions are found by matching braces on the source with its comments, string
and character literals (raw strings too) and preprocessor lines blanked out, so a brace inside any of them
counts for nothing. At namespace, `extern "C"` and class scope, a `{` opens a function body when the
declaration before it ends with a parameter list, optionally followed by qualifiers (const, noexcept,
override, a trailing return type) or a constructor's initialiser list (whose brace-initialised members are
skipped, not taken for the body). A lambda or a local class inside a function counts as part of it; a
lambda at namespace scope counts as a function of its own. Everything else that has braces (enums,
initialisers, `= {...}`) is skipped whole.

--allowed FILE lists the functions still over the limit while they are split (`PATH NAME LINES`): each may
not grow, and its line must go once it is within the limit.

Exit 0 when no function is over the limit, 1 naming each one that is (file:line, name, lines), 2 on usage.
--self-test reads FIXTURE, whose lines `// expect: NAME LINES` list every function the detector must find
with its length, and exits 1 on any difference (a function missed, one found that is not listed, a length).
"""
import argparse
import pathlib
import re
import sys

SUFFIXES = {".cpp", ".hpp", ".cu", ".cuh", ".h"}
RAW_STRING = re.compile(r'(?<![\w])(?:u8|u|U|L)?R"[^\s()\\]{0,16}\(')


def blank_non_code(text):
    """The text with comments, literals and preprocessor lines turned into spaces (newlines kept), so that
    positions and line numbers stay those of the original."""
    out = list(text)
    i, n = 0, len(text)
    at_line_start = True

    def blank(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if c == "\n":
            at_line_start = True
            i += 1
            continue
        if c in " \t":
            i += 1
            continue
        if c == "#" and at_line_start:  # a preprocessor line, with its backslash continuations
            j = i
            while j < n:
                if text[j] == "\n" and text[j - 1] != "\\":
                    break
                if text.startswith("/*", j):  # a block comment inside a directive may span lines
                    end = text.find("*/", j + 2)
                    j = n if end < 0 else end + 2
                    continue
                j += 1
            blank(i, j)
            i = j
            continue
        at_line_start = False
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            blank(i, j)
            i = j
        elif RAW_STRING.match(text, i):
            quote = text.index('"', i)
            paren = text.find("(", quote)
            delim = text[quote + 1:paren]
            end = text.find(")" + delim + '"', paren)
            j = n if end < 0 else end + len(delim) + 2
            blank(i, j)
            i = j
        elif c in "\"'":
            # A digit separator (1'000'000) is not a character literal.
            if c == "'" and i > 0 and text[i - 1].isalnum() and re.match(r"[0-9a-fA-F]", text[i + 1:i + 2] or " ") \
                    and re.search(r"\b(0[xXbB])?[0-9][0-9a-fA-F']*$", text[max(0, i - 40):i]):
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            blank(i, min(j + 1, n))
            i = j + 1
        else:
            i += 1
    return "".join(out)


def matching(code, i, open_ch, close_ch):
    """The index of the bracket that closes the one at i."""
    depth = 0
    for j in range(i, len(code)):
        if code[j] == open_ch:
            depth += 1
        elif code[j] == close_ch:
            depth -= 1
            if depth == 0:
                return j
    raise ValueError(f"unbalanced {open_ch!r} at offset {i}")


QUALIFIERS = r"(?:\s*(?:const|volatile|noexcept(?:\s*\([^()]*\))?|override|final|mutable|&&|&|->\s*[^{;]+))*\s*$"


def parameter_list_end(header):
    """Where the parameter list of a function declaration ends in header (the index of its ')'), or None
    when header does not declare a function; also whether an initialiser list follows it."""
    stripped = header.rstrip()
    if not stripped:
        return None, False
    # A constructor's initialiser list: ') : member(x), other{y}'. The braces of brace-initialised members
    # were already skipped by the caller, so the header ends with ')' or '}' either way.
    depth = 0
    for k in range(len(stripped) - 1, -1, -1):
        ch = stripped[k]
        if ch in ")]}":
            depth += 1
        elif ch in "([{":
            depth -= 1
        elif depth == 0 and ch == ":" and stripped[k - 1:k] != ":" and stripped[k + 1:k + 2] != ":":
            before = stripped[:k].rstrip()
            if before.endswith(")") or re.search(r"\)" + QUALIFIERS.replace("\\s*$", "") + r"$", before):
                return parameter_list_end(before)[0], True
            return None, False
        elif depth == 0 and ch in ";=" and not re.search(r"operator\s*\S*$", stripped[:k + 1]):
            break
    m = re.search(r"\)" + QUALIFIERS, stripped)
    if not m:
        return None, False
    return m.start(), False


def function_name(header):
    header = re.sub(r"^\s*template\s*<", "<", header)
    if header.startswith("<"):  # drop the template parameter list
        depth = 0
        for k, ch in enumerate(header):
            depth += ch == "<"
            depth -= ch == ">"
            if depth == 0:
                header = header[k + 1:]
                break
    header = re.sub(r"\[\[.*?\]\]", " ", header)  # attributes: [[noreturn]], [[nodiscard]]
    if "[" in re.sub(r"operator\s*\[\s*\]", "operator", header).split("(")[0]:
        m = re.search(r"(\w+)\s*=\s*\[", header)
        return m.group(1) if m else "lambda"
    m = re.search(r"((?:[\w~]+|operator\s*[^\s(]+)(?:\s*<[^()]*>)?(?:\s*::\s*(?:[\w~]+|operator\s*[^\s(]+))*)\s*\(", header)
    return re.sub(r"\s+", "", m.group(1)) if m else header.strip().split("\n")[-1][:60]


def functions(code):
    """(name, first line, last line) of every function in code (blanked with blank_non_code)."""
    found = []
    line_of = []
    line = 1
    for ch in code:
        line_of.append(line)
        line += ch == "\n"

    def scan(start, end):
        header_start = start
        i = start
        while i < end:
            ch = code[i]
            if ch in ";}":
                header_start = i + 1
            elif ch == "(":  # parameter lists may hold braces (default arguments {})
                i = matching(code, i, "(", ")")
            elif ch == "{":
                header = code[header_start:i]
                close = matching(code, i, "{", "}")
                pl_end, in_init_list = parameter_list_end(header)
                words = header.split()
                if re.search(r"(^|\s)(namespace|extern)\b", header) and not re.search(r"\)\s*$", header):
                    scan(i + 1, close)
                    header_start = close + 1
                elif re.search(r"(^|[\s>])(class|struct|union)\b", header) and pl_end is None:
                    scan(i + 1, close)
                    header_start = close + 1  # 'struct X {...} x;' still ends at ';', harmless
                elif pl_end is not None and header.strip() and not re.search(r"(^|\s)enum\b", header):
                    tail = header.rstrip()
                    if in_init_list and re.search(r"[\w>]\s*$", tail):
                        # '{' right after a member's name in an initialiser list: that member's braces.
                        i = close + 1
                        continue
                    first = header_start + (len(header) - len(header.lstrip()))
                    found.append((function_name(header), line_of[first], line_of[close]))
                    header_start = close + 1
                elif in_init_list:
                    i = close + 1
                    continue
                else:
                    header_start = close + 1
                i = close
            i += 1

    scan(0, len(code))
    return found


def source_files(paths):
    for p in map(pathlib.Path, paths):
        if p.is_file():
            yield p
        else:
            yield from sorted(f for f in p.rglob("*") if f.suffix in SUFFIXES and f.is_file())


def read_allowed(path):
    """The functions still allowed over the limit while they are split: `PATH NAME LINES` a line."""
    allowed = {}
    for number, line in enumerate(pathlib.Path(path).read_text().splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split()
        if len(fields) != 3 or not fields[2].isdigit():
            raise SystemExit(f"{path}:{number}: expected 'PATH NAME LINES', got {line!r}")
        allowed[(fields[0], fields[1])] = int(fields[2])
    return allowed


def self_test(fixture):
    text = pathlib.Path(fixture).read_text()
    expected = [(m.group(1), int(m.group(2))) for m in re.finditer(r"// expect: (\S+) (\d+)", text)]
    got = [(name, last - first + 1) for name, first, last in functions(blank_non_code(text))]
    if sorted(got) != sorted(expected):
        print(f"{fixture}: the detector found {sorted(got)}\nexpected {sorted(expected)}")
        return 1
    print(f"ok: {len(got)} functions found in {fixture} with their expected lengths")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="*")
    ap.add_argument("--limit", type=int, default=100)
    ap.add_argument("--list", action="store_true", help="print every function's length, longest first")
    ap.add_argument("--root", help="print paths relative to this folder")
    ap.add_argument("--self-test", metavar="FIXTURE")
    ap.add_argument("--allowed", metavar="FILE", help="functions still over the limit, each at most as long as it says")
    args = ap.parse_args()
    if args.self_test:
        return self_test(args.self_test)
    if not args.paths:
        ap.error("name the folders to check")
    rows = []
    for f in source_files(args.paths):
        try:
            for name, first, last in functions(blank_non_code(f.read_text(errors="replace"))):
                rows.append((last - first + 1, f, first, name))
        except ValueError as e:
            print(f"{f}: cannot match its braces ({e}); the check cannot say how long its functions are")
            return 1
    rows.sort(key=lambda r: (-r[0], str(r[1]), r[2]))
    shown = (lambda f: f.relative_to(args.root)) if args.root else (lambda f: f)
    if args.list:
        for n, f, first, name in rows:
            print(f"{n:5d}  {shown(f)}:{first}  {name}")
        return 0
    allowed = read_allowed(args.allowed) if args.allowed else {}
    over, stale = [], dict(allowed)
    for n, f, first, name in rows:
        key = (str(shown(f)), name)
        if key in allowed and n <= allowed[key]:
            del stale[key]
            if n <= args.limit:
                print(f"{args.allowed}: {key[0]} {name} is {n} lines now, within the limit: remove its line")
                over.append((n, f, first, name))
            continue
        if n > args.limit:
            known = f", longer than the {allowed[key]} that {args.allowed} allows" if key in allowed else ""
            print(f"{shown(f)}:{first}: {name} is {n} lines (the limit is {args.limit}{known})")
            over.append((n, f, first, name))
    for path, name in stale:
        if not any(str(shown(f)) == path and nm == name for _, f, _, nm in rows):
            print(f"{args.allowed}: {path} has no function {name} any more: remove its line")
            over.append((0, path, 0, name))
    if over:
        print(f"{len(over)} function(s) over {args.limit} lines; split them into steps that each say what they do")
        return 1
    longest = f"; the longest is {rows[0][3]} ({shown(rows[0][1])}:{rows[0][2]}) at {rows[0][0]}" if rows else ""
    exempt = f" but the {len(allowed)} that {args.allowed} lists" if allowed else ""
    print(f"ok: {len(rows)} functions, none over {args.limit} lines{exempt}{longest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
