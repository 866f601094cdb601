#!/usr/bin/python3
"""cbctl serve's page in a real headless Chromium, driven through the
DevTools protocol (Debian's python3-websocket): the DOM is read while the
page stays open, so a tile is seen changing without a reload.

dashboard.py page  --url URL --control-url URL --token T --cbctl CBCTL --file FILE --out DIR --expect JSON
dashboard.py axe   --url URL --axe axe.min.js --out DIR
dashboard.py fleet --url URL --out DIR --expect JSON --hosts JSON

Each check prints "ok   ..." or ends the run with "FAIL: ..." and status 1.
"""
import argparse
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import websocket

PATIENCE = 30  # seconds, for what only a failing run waits out


def fail(why):
    print("FAIL: " + why, file=sys.stderr)
    sys.exit(1)


def ok(what):
    print("ok   " + what, flush=True)


class Browser:
    """One headless Chromium with one page, and a DevTools connection to it."""

    def __init__(self, out_dir):
        self.profile = tempfile.mkdtemp(prefix="lb-chromium-")
        self.log = open(os.path.join(out_dir, "chromium.log"), "w")
        chromium = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
        self.proc = subprocess.Popen(
            [chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--no-default-browser-check", "--disable-extensions", "--disable-dev-shm-usage",
             "--user-data-dir=" + self.profile, "--remote-debugging-port=0",
             "--window-size=1280,1000", "about:blank"],
            stdout=self.log, stderr=self.log)
        port = self._devtools_port()
        deadline = time.time() + PATIENCE
        while True:
            try:
                targets = json.load(urllib.request.urlopen("http://127.0.0.1:%d/json/list" % port, timeout=5))
                pages = [t for t in targets if t.get("type") == "page"]
                if pages:
                    break
            except OSError:
                pass
            if time.time() > deadline:
                fail("Chromium shows no page target")
            time.sleep(0.1)
        self.ws = websocket.create_connection(pages[0]["webSocketDebuggerUrl"], timeout=PATIENCE,
                                              suppress_origin=True)
        self.next_id = 0
        self.send("Page.enable")
        self.send("Runtime.enable")

    def _devtools_port(self):
        # With port 0, Chromium writes the one it took into the profile.
        path = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.time() + PATIENCE
        while time.time() < deadline:
            if self.proc.poll() is not None:
                fail("Chromium exited %d; see chromium.log" % self.proc.returncode)
            try:
                with open(path) as f:
                    first = f.readline().strip()
                if first:
                    return int(first)
            except (OSError, ValueError):
                pass
            time.sleep(0.1)
        fail("Chromium did not open its DevTools port")

    def send(self, method, **params):
        self.next_id += 1
        mine = self.next_id
        self.ws.send(json.dumps({"id": mine, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == mine:
                if "error" in msg:
                    fail("%s: %s" % (method, msg["error"]))
                return msg.get("result", {})

    def evaluate(self, expr):
        r = self.send("Runtime.evaluate", expression=expr, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            fail("page script %r threw: %s" % (expr[:80], json.dumps(r["exceptionDetails"])[:400]))
        return r["result"].get("value")

    def wait_for(self, expr, seconds=PATIENCE, what=None):
        deadline = time.time() + seconds
        while True:
            v = self.evaluate(expr)
            if v:
                return v
            if time.time() > deadline:
                return None
            time.sleep(0.05)

    def navigate(self, url):
        self.send("Page.navigate", url=url)
        self.wait_for("document.readyState === 'complete' && location.href !== 'about:blank'")

    def screenshot(self, path):
        data = self.send("Page.captureScreenshot", format="png")["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
        ok("screenshot " + os.path.basename(path))

    def click(self, selector):
        """A real mouse click (pressed and released) at the element's centre."""
        box = self.evaluate("""(() => { const e = document.querySelector(%s); if (!e) return null;
            e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();
            return [r.x + r.width / 2, r.y + r.height / 2]; })()""" % json.dumps(selector))
        if not box:
            fail("nothing matches %s to click" % selector)
        for kind in ("mousePressed", "mouseReleased"):
            self.send("Input.dispatchMouseEvent", type=kind, x=box[0], y=box[1], button="left", clickCount=1)

    def type_into(self, selector, text):
        """Focus, select all, and type as a keyboard would (input events)."""
        self.evaluate("(() => { const e = document.querySelector(%s); e.focus(); e.select(); })()"
                      % json.dumps(selector))
        self.send("Input.insertText", text=text)

    def close(self):
        try:
            self.ws.close()
        except Exception:
            pass
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        shutil.rmtree(self.profile, ignore_errors=True)


TILES = """[...document.querySelectorAll('#tiles .tile')].map(t => ({
  name: t.dataset.name, state: t.dataset.state, hidden: t.hidden,
  word: t.querySelector('.state').textContent, text: t.textContent}))"""


def tiles(b):
    return b.evaluate(TILES) or []


def tile_of(b, name):
    for t in tiles(b):
        if t["name"] == name:
            return t
    return None


def all_shown(b, expect):
    got = {t["name"]: t for t in tiles(b)}
    for name, state in expect.items():
        t = got.get(name)
        if not t or t["state"] != state or state not in t["word"]:
            return False
    return len(got) == len(expect)


def post(url, token=None):
    req = urllib.request.Request(url, data=b"", method="POST")
    if token is not None:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def check_shown(b, a, expect):
    if not b.wait_for("document.querySelectorAll('#tiles .tile').length >= %d" % len(expect)):
        fail("the page shows %d tiles, want %d" % (len(tiles(b)), len(expect)))
    deadline = time.time() + PATIENCE
    while not all_shown(b, expect):
        if time.time() > deadline:
            fail("tiles %s, want %s" % ({t["name"]: t["state"] for t in tiles(b)}, expect))
        time.sleep(0.1)
    ok("every breaker is shown with its state (word and icon): %s"
       % ", ".join("%s=%s" % kv for kv in sorted(expect.items())))


def check_order(b, expect):
    states = [t["state"] for t in tiles(b)]
    rank = {"OPEN": 0, "FORCED_OPEN": 1, "HALF_OPEN": 2, "DISABLED": 3, "CLOSED": 4}
    if states != sorted(states, key=lambda s: rank[s]):
        fail("not sorted open first: %s" % states)
    ok("sorted open first: %s" % " ".join(states))


def check_trip(b, a, name):
    b.evaluate("window.lbNotReloaded = true")
    t0 = time.time()
    subprocess.run([a.cbctl, "trip", a.file, name, "--for", "5m"], check=True, stdout=subprocess.DEVNULL)
    seen = b.wait_for("(() => { const t = [...document.querySelectorAll('#tiles .tile')]"
                      ".find(t => t.dataset.name === %s); return t && t.dataset.state === 'OPEN'; })()"
                      % json.dumps(name), seconds=PATIENCE)
    took = time.time() - t0
    if not seen:
        fail("%s's tile never turned OPEN after cbctl trip" % name)
    if took > 2.0:
        fail("%s's tile turned OPEN %.2f s after cbctl trip, want within 2 s" % (name, took))
    if not b.evaluate("window.lbNotReloaded === true"):
        fail("the page was reloaded")
    t = tile_of(b, name)
    if "probe in" not in t["text"]:
        fail("%s's tile shows no countdown: %s" % (name, t["text"]))
    ok("cbctl trip %s: its tile turned OPEN %.2f s later, without a reload, with a countdown" % (name, took))
    before = t["text"]
    time.sleep(1.2)
    if tile_of(b, name)["text"] == before:
        fail("the countdown does not move: %s" % before)
    ok("the open period's countdown moves")


def check_filter(b, expect, text):
    b.type_into("#filter", text)
    want = sorted(n for n in expect if text.lower() in n.lower())
    visible = b.wait_for("(() => { const v = [...document.querySelectorAll('#tiles .tile')].filter(t => !t.hidden)"
                         ".map(t => t.dataset.name).sort(); return JSON.stringify(v) === %s ? v : null; })()"
                         % json.dumps(json.dumps(want, separators=(",", ":"))), seconds=5)
    if visible is None:
        fail("filter %r shows %s, want %s" % (text, [t["name"] for t in tiles(b) if not t["hidden"]], want))
    ok("the filter %r shows only %s" % (text, ", ".join(want)))


def clear_filter(b):
    b.type_into("#filter", "")
    b.send("Input.dispatchKeyEvent", type="keyDown", key="Backspace", code="Backspace",
           windowsVirtualKeyCode=8)
    b.send("Input.dispatchKeyEvent", type="keyUp", key="Backspace", code="Backspace", windowsVirtualKeyCode=8)
    if not b.wait_for("[...document.querySelectorAll('#tiles .tile')].every(t => !t.hidden)", seconds=5):
        fail("clearing the filter does not show every tile")


def open_detail(b, name):
    b.click("#tiles .tile[data-name=%s] .name" % json.dumps(name))
    if not b.wait_for("document.getElementById('detail').open && "
                      "document.getElementById('detail-title').textContent === %s" % json.dumps(name), seconds=5):
        fail("clicking %s's name opens no detail view" % name)


def close_detail(b):
    b.click("#detail-close")
    if not b.wait_for("!document.getElementById('detail').open", seconds=5):
        fail("Close does not close the detail view")


def detail_rows(b, table):
    return b.evaluate("Object.fromEntries([...document.querySelectorAll('#%s tr')]"
                      ".map(r => [r.querySelector('th').textContent, r.querySelector('td').textContent]))" % table)


def check_detail(b, a, tripped):
    open_detail(b, tripped)
    config = detail_rows(b, "detail-config")
    want = json.loads(subprocess.run([a.cbctl, "show", a.file, tripped, "--json"], check=True,
                                     capture_output=True, text=True).stdout)["config"]
    for field, value in want.items():
        if config.get(field) != str(value) and config.get(field) != json.dumps(value).strip('"'):
            fail("detail view: %s = %r, cbctl show says %r" % (field, config.get(field), value))
    ok("the detail view lists the configuration (%d fields, as cbctl show --json)" % len(want))
    trans = b.evaluate("document.getElementById('detail-transitions').textContent")
    if "CLOSED \u2192 OPEN" not in trans:
        fail("the detail view's transitions lack CLOSED \u2192 OPEN: %s" % trans)
    ok("the detail view lists the transition seen: %s" % trans.strip())
    if not b.evaluate("document.getElementById('actions').hidden"):
        fail("a read-only server's page offers operator actions")
    ok("read-only: the page offers no actions")
    b.screenshot(os.path.join(a.out, "detail.png"))
    close_detail(b)


def check_refusals(base, name, token):
    url = base + "/api/breakers/" + urllib.request.quote(name, safe="") + "/reset"
    for tok, why in ((None, "without a token"), ("0" * 32, "with a wrong token")) + (
            ((token, "with the token"),) if token else ()):
        code, body = post(url, tok)
        if code != 403:
            fail("POST %s %s answered %d %s, want 403" % (url, why, code, body))
        ok("POST .../reset %s: 403 %s" % (why, body.strip()))


def check_reset_from_page(b, a, name):
    b.navigate(a.control_url + "/#token=" + a.token)
    if not b.wait_for("location.hash === '' && !!document.querySelector('#tiles .tile')"):
        fail("the control page did not load or kept the token in its address")
    open_detail(b, name)
    if not b.wait_for("!document.getElementById('actions').hidden", seconds=5):
        fail("with --allow-control the page offers no actions")
    b.click("#actions button[data-action=reset]")
    result = b.wait_for("(() => { const t = document.getElementById('action-result').textContent;"
                        " return /done|refused|failed/.test(t) ? t : null; })()", seconds=10)
    if result != "reset: done":
        fail("reset from the page: %r" % result)
    state = json.loads(subprocess.run([a.cbctl, "show", a.file, name, "--json"], check=True,
                                      capture_output=True, text=True).stdout)["state"]
    if state != "CLOSED":
        fail("after the page's reset, cbctl show says %s is %s" % (name, state))
    ok("with --allow-control and the token, Reset on the page made %s CLOSED in the file" % name)
    if not b.wait_for("(() => { const t = [...document.querySelectorAll('#tiles .tile')]"
                      ".find(t => t.dataset.name === %s); return t && t.dataset.state === 'CLOSED'; })()"
                      % json.dumps(name), seconds=5):
        fail("the page does not show %s CLOSED after its reset" % name)
    b.screenshot(os.path.join(a.out, "control.png"))
    close_detail(b)


def check_rates(b, name):
    rate = b.wait_for("(() => { const t = [...document.querySelectorAll('#tiles .tile')]"
                      ".find(t => t.dataset.name === %s); const dd = t && t.querySelector('.rates dd');"
                      " return dd && dd.textContent !== '0/s' && dd.textContent !== '\u2013' &&"
                      " t.querySelector('.spark polyline') ? dd.textContent : null; })()" % json.dumps(name),
                      seconds=10)
    if not rate:
        fail("%s's tile shows no admitted rate or sparkline" % name)
    ok("%s's tile shows an admitted rate of %s over the last polls, with a sparkline" % (name, rate))


def run_page(a):
    expect = json.loads(a.expect)
    b = Browser(a.out)
    try:
        b.navigate(a.url + "/")
        check_shown(b, a, expect)
        check_order(b, expect)
        check_rates(b, a.busy)
        b.screenshot(os.path.join(a.out, "states.png"))
        check_trip(b, a, a.trip)
        expect[a.trip] = "OPEN"
        b.screenshot(os.path.join(a.out, "tripped.png"))
        check_filter(b, expect, a.filter)
        b.screenshot(os.path.join(a.out, "filtered.png"))
        clear_filter(b)
        check_detail(b, a, a.trip)
        check_refusals(a.url, a.reset, a.token)
        check_refusals(a.control_url, a.reset, None)
        check_reset_from_page(b, a, a.reset)
    finally:
        b.close()


def run_axe(a):
    with open(a.axe) as f:
        axe = f.read()
    b = Browser(a.out)
    try:
        b.navigate(a.url + "/")
        if not b.wait_for("document.querySelectorAll('#tiles .tile').length > 0"):
            fail("the page shows no tiles")
        b.evaluate(axe)
        views = [("the tiles", None), ("a detail view", a.detail)]
        for what, name in views:
            if name:
                open_detail(b, name)
            result = b.evaluate("axe.run(document, {resultTypes: ['violations']})"
                                ".then(r => r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,"
                                " nodes: v.nodes.map(n => n.target.join(' ')).slice(0, 5)})))")
            bad = [v for v in result if v["impact"] in ("serious", "critical")]
            for v in result:
                print("     axe %s (%s): %s at %s" % (v["id"], v["impact"], v["help"], v["nodes"]))
            if bad:
                fail("axe-core finds %d serious or critical violations in %s" % (len(bad), what))
            ok("axe-core: no serious or critical violation in %s (%d lesser)" % (what, len(result)))
    finally:
        b.close()


def run_fleet(a):
    expect = json.loads(a.expect)
    hosts = json.loads(a.hosts)
    b = Browser(a.out)
    try:
        b.navigate(a.url + "/")
        check_shown(b, a, expect)
        for name, want in hosts.items():
            line = b.wait_for("(() => { const t = [...document.querySelectorAll('#tiles .tile')]"
                              ".find(t => t.dataset.name === %s); const h = t && t.querySelector('.hosts-line');"
                              " return h ? h.textContent : null; })()" % json.dumps(name), seconds=10)
            if line != "hosts: " + (", ".join(want) if want else "none reporting"):
                fail("%s's hosts line is %r, want %s" % (name, line, want))
            ok("%s's tile: %s" % (name, line))
        b.screenshot(os.path.join(a.out, "fleet.png"))
    finally:
        b.close()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["page", "axe", "fleet"])
    for opt in ("url", "control-url", "token", "cbctl", "file", "out", "expect", "axe", "hosts",
                "trip", "reset", "filter", "busy", "detail"):
        p.add_argument("--" + opt)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    {"page": run_page, "axe": run_axe, "fleet": run_fleet}[a.mode](a)
    print("passed")


if __name__ == "__main__":
    main()
