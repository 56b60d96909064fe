#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""speedscope.py - opens a profile in speedscope, the flame graph viewer, and checks what it shows.

Usage: speedscope.py SPEEDSCOPE_DIR PROFILE [SYMBOL=TOTAL/SELF | profile:NAME=WEIGHT]...

SPEEDSCOPE_DIR is the web app of the npm package speedscope (its dist/release), which the
project's ./vbts fetches. The app and PROFILE are served on 127.0.0.1 and the page is loaded in
Debian's headless Chromium with the profile in its URL (#profileURL=...&view=sandwich), as
speedscope's own `speedscope FILE` does; speedscope picks the format from the file (folded
stacks, callgrind, Chrome trace events) itself. The DOM Chromium prints once the page is idle
holds speedscope's Sandwich view: a row per function with its total and self weight.

A file of several profiles (a Chrome trace's threads) also has speedscope's list of them, and
the Sandwich view is that of the first.

Checked: speedscope loaded the profile (its title names the file; an import error shows an
alert instead and the page never gets there), the table has rows, and each SYMBOL=TOTAL/SELF
given is a row with those weights, and each profile:NAME=WEIGHT is in the list of profiles. Prints the file's name, "profile N: NAME WEIGHT" per profile
of the list, then "SYMBOL TOTAL SELF" per row (weights as speedscope writes them), and exits 0; or says what is wrong and exits 1. Exits 77
(skipped) when Chromium or the app is not installed.
"""
import functools
import html.parser
import http.server
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import urllib.parse

CHROMIUM = "/usr/bin/chromium"


class Sandwich(html.parser.HTMLParser):
    """
    Collects the <title>, the rows of the Sandwich view's table (td: total, self, name; after
    the header cell "Symbol Name") and, for a file of several profiles (threads), the rows of
    the profile list (td: number, name, weight; after the header cell "Total Weight").
    """

    def __init__(self):
        super().__init__()
        self.title = ""
        self.rows = []
        self.profiles = []
        self._in_title = False
        self._cell = None
        self._row = None
        self._table = None
        self._header = None

    def handle_starttag(self, tag, attrs):
        if tag == "title":
            self._in_title = True
        elif tag == "th":
            self._header = ""
        elif tag == "tr":
            self._row = []
        elif tag == "td" and self._row is not None:
            self._cell = ""

    def handle_endtag(self, tag):
        if tag == "title":
            self._in_title = False
        elif tag == "th":
            if self._header.strip() == "Symbol Name":
                self._table = self.rows
            elif self._header.strip() == "Total Weight":
                self._table = self.profiles
            self._header = None
        elif tag == "td" and self._cell is not None:
            self._row.append(self._cell.strip())
            self._cell = None
        elif tag == "tr":
            if self._row and len(self._row) == 3 and self._table is not None:
                self._table.append(tuple(self._row))
            self._row = None

    def handle_data(self, data):
        if self._in_title:
            self.title += data
        if self._cell is not None:
            self._cell += data
        if self._header is not None:
            self._header += data


def weight(cell):
    """'11 (92%)' -> '11': the weight, without the share speedscope adds."""
    return cell.split(" (", 1)[0]


def render(url, tmp, budget):
    """The DOM Chromium holds after @budget ms of virtual time on @url."""
    try:
        return subprocess.run(
            [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu",
             "--no-first-run", "--disable-dev-shm-usage",
             f"--user-data-dir={tmp}/profile", f"--virtual-time-budget={budget}",
             "--dump-dom", url],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=60 + budget // 1000,
            check=False).stdout.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        sys.exit(f"{url}: Chromium did not finish in {60 + budget // 1000} s (speedscope's "
                 "import error alert waits for a click)")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    app, profile = sys.argv[1], sys.argv[2]
    want = dict(a.rsplit("=", 1) for a in sys.argv[3:])
    if not os.access(CHROMIUM, os.X_OK) or not os.path.isfile(os.path.join(app, "index.html")):
        print(f"skipped: {CHROMIUM} or {app}/index.html missing (./vbts installs both)")
        sys.exit(77)
    with tempfile.TemporaryDirectory(prefix="vbts-speedscope-") as tmp:
        www = os.path.join(tmp, "www")
        shutil.copytree(app, www)
        name = os.path.basename(profile)
        shutil.copyfile(profile, os.path.join(www, name))
        handler = functools.partial(QuietHandler, directory=www)
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{server.server_address[1]}"
        url = (f"{base}/index.html#profileURL={urllib.parse.quote(base + '/' + name, safe='')}"
               "&view=sandwich")
        # A busy machine can leave the table unrendered when the virtual time budget runs
        # out (the title is there, the rows are not): try again with a larger budget.
        for budget in (10000, 30000, 90000):
            page = Sandwich()
            page.feed(render(url, tmp, budget))
            if page.rows:
                break
        server.shutdown()
    if page.title.strip() != f"{name} - speedscope":
        sys.exit(f"{profile}: speedscope did not load it (page title {page.title.strip()!r})")
    if not page.rows:
        sys.exit(f"{profile}: speedscope's Sandwich view has no rows")
    rows, profiles = {}, {}
    print(name)
    for number, profile_name, total in page.profiles:
        profiles[profile_name] = total
        print(f"profile {number}: {profile_name} {total}")
    for total, self_w, symbol in page.rows:
        rows[symbol] = f"{weight(total)}/{weight(self_w)}"
        print(symbol, weight(total), weight(self_w))
    for symbol, ts in want.items():
        if symbol.startswith("profile:"):
            if profiles.get(symbol[8:]) != ts:
                sys.exit(f"{profile}: profile {symbol[8:]!r}: speedscope shows "
                         f"{profiles.get(symbol[8:])}, {ts} expected")
        elif rows.get(symbol) != ts:
            sys.exit(f"{profile}: {symbol!r}: speedscope shows {rows.get(symbol)} "
                     f"(total/self), {ts} expected")


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the app without a log line per request."""

    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
        pass


if __name__ == "__main__":
    main()
