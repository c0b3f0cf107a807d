#!/usr/bin/env python3
"""manpage.py -- write Manta's man pages from the programs' own --help.

  manpage.py BIN_DIR OUT_DIR VERSION

Runs `manta --help`, `manta CMD --help` for every command it lists,
`manta-head --help` and `manta-worker --help`, and turns each text into
a roff page: manta(1), manta-CMD(1) (as git does), manta-head(8) and
manta-worker(8). The help text is the one source of truth, so a page can
never disagree with the program; this script only knows the layout every
--help follows:

    usage: PROG ...             -> SYNOPSIS (continuation lines indented)
    <blank>
    paragraphs                  -> DESCRIPTION (first sentence -> NAME)
    <blank>
      --opt ARG    text         -> OPTIONS, one .TP each; deeper-indented
                       more     lines continue the text
    heading (...):              -> a subsection (.SS)

Pages are gzipped reproducibly (mtime 0), as Debian installs them. Called
by cmake/manpages.cmake at build time; tests/integration/test_man.py
checks the result.
"""
import gzip
import os
import re
import subprocess
import sys

DAEMONS = {"manta-head": "8", "manta-worker": "8"}
SEE_ALSO_DOC = "/usr/share/doc/manta/README.md"


def run_help(argv):
    """The --help text of argv (exit code ignored: usage goes to stdout
    or stderr depending on the program)."""
    p = subprocess.run(argv + ["--help"], capture_output=True, text=True,
                       timeout=30)
    text = p.stdout if p.stdout.strip() else p.stderr
    if not text.strip().startswith("usage:"):
        sys.exit("manpage.py: %s --help printed no usage:\n%s"
                 % (" ".join(argv), text))
    return text.rstrip("\n").split("\n")


def esc(s):
    """s as roff text: backslashes and hyphens escaped, a leading dot or
    quote made literal."""
    s = s.replace("\\", "\\e").replace("-", "\\-")
    if s[:1] in (".", "'"):
        s = "\\&" + s
    return s


def is_heading(lines, i):
    """lines[i] opens an option block: not indented, ends with ":" and the
    next line is indented by exactly two spaces ("resources:")."""
    return (not lines[i].startswith(" ") and lines[i].rstrip().endswith(":")
            and i + 1 < len(lines) and re.match(r"  \S", lines[i + 1]))


def split_help(lines):
    """(usage lines, description paragraphs, option blocks, trailing
    paragraphs) of a --help text. A paragraph is (literal?, [lines]): one
    with indented lines keeps its layout. An option block is (heading or
    None, [(term, [text lines])])."""
    i, usage = 0, []
    while i < len(lines) and lines[i].strip():
        # "usage: " is 7 wide: continuation lines keep their alignment
        usage.append(lines[i][7:].rstrip())
        i += 1
    j = i
    while j < len(lines) and not (lines[j].startswith("  -")
                                  or is_heading(lines, j)):
        j += 1
    blocks, trailing = parse_options(lines[j:])
    return usage, paragraphs(lines[i:j]), blocks, trailing


def paragraphs(lines):
    """Blank-line separated paragraphs of lines, as split_help describes."""
    out, para = [], []
    for line in lines + [""]:
        if line.strip():
            para.append(line.rstrip())
        elif para:
            out.append((any(l.startswith(" ") for l in para), para))
            para = []
    return out


def parse_options(lines):
    """(option blocks, trailing paragraphs) of the lines from the first
    option or heading on; unindented lines that are not headings (a
    closing "See also: ...") are trailing text."""
    blocks, items, heading, rest = [], [], None, []
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        if is_heading(lines, i):
            if items or heading:
                blocks.append((heading, items))
            heading, items = line.strip().rstrip(":"), []
        elif not line.startswith(" "):
            rest.append(line)
        elif line[2:].startswith(" ") and items:
            items[-1][1].append(line.rstrip())   # continuation
        else:
            parts = re.split(r"\s{2,}", line.strip(), maxsplit=1)
            items.append((parts[0], parts[1:]))
    if items or heading:
        blocks.append((heading, items))
    return blocks, paragraphs(rest)


def roff_paragraphs(paras):
    """roff lines of (literal?, lines) paragraphs."""
    out = []
    for n, (literal, para) in enumerate(paras):
        if n:
            out.append(".PP")
        if literal:
            out += [".nf"] + [esc(l) for l in para] + [".fi"]
        else:
            out.append(esc(" ".join(l.strip() for l in para)))
    return out


def roff_item_text(text):
    """roff lines of an option's text: the first line and the continuation
    lines aligned under it flow; lines indented deeper (a table inside the
    text) keep their layout."""
    cont = text[1:]
    base = min((len(l) - len(l.lstrip()) for l in cont), default=0)
    out, flow = [], [text[0].strip()] if text else []
    deep = []
    for l in cont:
        if len(l) - len(l.lstrip()) > base:
            if flow:
                out.append(esc(" ".join(flow)))
                flow = []
            deep.append(esc(l[base:]))
            continue
        if deep:
            out += [".nf"] + deep + [".fi"]
            deep = []
        flow.append(l.strip())
    if deep:
        out += [".nf"] + deep + [".fi"]
    if flow:
        out.append(esc(" ".join(flow)))
    return out


def roff_page(name, section, version, help_lines, see_also,
              summary=None):
    usage, desc, blocks, trailing = split_help(help_lines)
    if summary is None:
        first = " ".join(l.strip() for l in desc[0][1]) if desc else name
        summary = first.split(". ")[0].split(": ")[0].rstrip(".")
        summary = summary[0].lower() + summary[1:]
    out = ['.TH "%s" "%s" "" "Manta %s" "Manta"' % (name.upper(), section,
                                                   version),
           ".SH NAME", "%s \\- %s" % (esc(name), esc(summary)),
           ".SH SYNOPSIS", ".nf"]
    out += [esc(u) for u in usage]
    out += [".fi", ".SH DESCRIPTION"] + roff_paragraphs(desc)
    in_options = False
    for heading, items in blocks:
        if heading == "commands":
            out.append(".SH COMMANDS")
        else:
            if not in_options:
                out.append(".SH OPTIONS")
                in_options = True
            if heading:
                out.append(".SS %s" % esc(heading))
        for term, text in items:
            out += [".TP", "\\fB%s\\fR" % esc(term)] + roff_item_text(text)
    if trailing:
        out += [".SH NOTES"] + roff_paragraphs(trailing)
    see = see_also + ["the documentation in " + SEE_ALSO_DOC +
                      " and /usr/share/doc/manta/"]
    out += [".SH SEE ALSO", esc(", ".join(see))]
    return "\n".join(out) + "\n"


def write_page(out_dir, name, section, text):
    path = os.path.join(out_dir, "%s.%s.gz" % (name, section))
    with open(path, "wb") as f:
        with gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=0) as z:
            z.write(text.encode())


def commands(manta_help):
    """{name: one-line summary} of the commands `manta --help` lists under
    "commands:", in its order."""
    names, inside = {}, False
    for line in manta_help:
        if line.strip() == "commands:":
            inside = True
        elif inside and line.startswith("  ") and line.strip():
            name, summary = line.split(None, 1)
            names[name] = summary.strip()
        elif inside and not line.strip() and names:
            break
    return names


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: manpage.py BIN_DIR OUT_DIR VERSION")
    bin_dir, out_dir, version = sys.argv[1:]
    os.makedirs(out_dir, exist_ok=True)
    manta = os.path.join(bin_dir, "manta")
    top = run_help([manta])
    cmds = commands(top)
    if not cmds:
        sys.exit("manpage.py: `manta --help` lists no commands")
    subpages = ["manta-%s(1)" % c for c in cmds]
    write_page(out_dir, "manta", "1",
               roff_page("manta", "1", version, top,
                         subpages + ["manta-head(8)", "manta-worker(8)"],
                         summary="run, inspect and use a Manta cluster"))
    for c, summary in cmds.items():
        write_page(out_dir, "manta-" + c, "1",
                   roff_page("manta-" + c, "1", version,
                             run_help([manta, c]), ["manta(1)"], summary))
    for d, section in DAEMONS.items():
        write_page(out_dir, d, section,
                   roff_page(d, section, version,
                             run_help([os.path.join(bin_dir, d)]),
                             ["manta(1)", "manta-start(1)"]))


if __name__ == "__main__":
    main()
