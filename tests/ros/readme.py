"""The interface tables of docs/ros.md (Topics, Services, Parameters), so
the suite checks that what the documentation promises is what ik_node has."""
import os

from harness import ROOT


def table(heading, path=os.path.join(ROOT, "docs", "ros.md"), nth=0):
    """The body rows (lists of cell texts) of the `nth` table after the
    line `heading`, before the next heading."""
    with open(path) as f:
        lines = f.read().splitlines()
    start = lines.index(heading) + 1
    tables, rows = [], None
    for line in lines[start:]:
        if line.startswith("#"):
            break
        if line.startswith("|"):
            if rows is None:
                rows = []
                tables.append(rows)
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
        else:
            rows = None
    # Drop each table's header and |---| rows.
    return [r for r in tables[nth][2:]]
