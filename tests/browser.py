"""Headless Chromium driven over the DevTools protocol on a pipe (--remote-debugging-pipe): no driver package, no
port. Used by the page tests, benchmarks/bench_chart_page.py and docs/readme_chart.py.

The browser starts with the network cut off (every host resolves to nothing, a dead proxy) and the page is told it
is offline; every request the page makes is recorded, and so is every console error and uncaught exception.
"""
from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import shutil
import signal
import time
from pathlib import Path
from typing import Any

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
NO_NETWORK = ["--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=http://127.0.0.1:9",
              "--disable-background-networking", "--disable-component-update", "--disable-sync",
              "--disable-default-apps", "--no-first-run", "--disable-extensions"]


def browser_path() -> str | None:
    """The first Chromium on PATH, or None."""
    return next((p for name in BROWSERS if (p := shutil.which(name))), None)


def no_browser_reason() -> str:
    return f"no headless Chromium on PATH (tried {', '.join(BROWSERS)}; Debian: apt-get install chromium)"


class BrowserError(RuntimeError):
    pass


class Chromium:
    """One headless browser with one page of the given size, at one device pixel per CSS pixel."""

    def __init__(self, profile: Path, width: int = 1200, height: int = 800, timeout: float = 60.0) -> None:
        path = browser_path()
        if path is None:
            raise BrowserError(no_browser_reason())
        self.timeout = timeout
        self.events: list[dict[str, Any]] = []
        self._next_id = 0
        self._buffer = b""
        # The protocol reads commands on descriptor 3 and writes replies on 4. Both pipe ends are first moved
        # above 4, so that placing one on 3 or 4 cannot overwrite the other.
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        child_r, child_w = (fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (to_browser_r, from_browser_w))
        args = [path, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe", "--hide-scrollbars",
                "--force-device-scale-factor=1", f"--window-size={width},{height}", f"--user-data-dir={profile}",
                # A sandboxed iframe (the notebook's frame) stays in the page's process: its console reaches this
                # session, and screenshots do not miss it, as they sometimes do with a frame in another process.
                "--disable-features=IsolateSandboxedIframes", *NO_NETWORK, "about:blank"]
        quiet = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)]
        self.pid = os.posix_spawn(path, args, os.environ, setpgroup=0, file_actions=[
            *quiet, (os.POSIX_SPAWN_DUP2, child_r, 3), (os.POSIX_SPAWN_DUP2, child_w, 4)])
        for fd in (to_browser_r, from_browser_w, child_r, child_w):
            os.close(fd)
        target = self.call("Target.createTarget", url="about:blank", session=None)["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True, session=None)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable")
        self.call("Network.emulateNetworkConditions", offline=True, latency=0, downloadThroughput=-1,
                  uploadThroughput=-1)
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height, deviceScaleFactor=1,
                  mobile=False)

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Ask the browser to quit, wait for it, then end what is left of its process group (renderers)."""
        try:
            self.call("Browser.close", session=None)
        except (BrowserError, OSError):
            pass
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        deadline = time.monotonic() + 10
        while os.waitpid(self.pid, os.WNOHANG) == (0, 0) and time.monotonic() < deadline:
            time.sleep(0.05)
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass

    # -- the protocol ---------------------------------------------------------------------------------------
    def call(self, method: str, session: str | None | bool = True, **params: Any) -> dict[str, Any]:
        """Send one command (to the page's session unless session=None) and return its result."""
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if session is True:
            message["sessionId"] = self.session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise BrowserError(f"{method}: {reply['error']}")
                return reply["result"]

    def wait_for(self, method: str) -> dict[str, Any]:
        """The first event named `method` from now on (earlier ones stay in self.events)."""
        seen = len(self.events)
        while True:
            for event in self.events[seen:]:
                if event["method"] == method:
                    return event["params"]
            seen = len(self.events)
            self._read()

    def _read(self) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_browser], [], [], left)[0]:
                raise BrowserError(f"Chromium did not answer within {self.timeout} s")
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise BrowserError("Chromium closed the pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        message = json.loads(raw)
        if "method" in message:
            self.events.append(message)
        return message

    # -- what the tests do ----------------------------------------------------------------------------------
    def open(self, url: str) -> None:
        """Navigate and wait for the load event."""
        self.call("Page.navigate", url=url)
        self.wait_for("Page.loadEventFired")

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (promises awaited)."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def mouse(self, kind: str, x: float, y: float, **extra: Any) -> None:
        """A mouse event at CSS pixel (x, y) of the page: mouseMoved, mousePressed, mouseReleased, mouseWheel."""
        self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, **extra)

    def click(self, x: float, y: float) -> None:
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.mouse(kind, x, y, **({} if kind == "mouseMoved" else {"button": "left", "clickCount": 1}))

    def screenshot(self, x: float = 0, y: float = 0, width: float | None = None, height: float | None = None) -> bytes:
        """PNG bytes of the page, or of the given rectangle of it."""
        params: dict[str, Any] = {"format": "png"}
        if width is not None:
            params["clip"] = {"x": x, "y": y, "width": width, "height": height, "scale": 1}
        return base64.b64decode(self.call("Page.captureScreenshot", **params)["data"])

    def requests(self, since: int = 0) -> list[str]:
        """Every URL the page asked for (after the first `since` events)."""
        return [e["params"]["request"]["url"] for e in self.events[since:]
                if e["method"] == "Network.requestWillBeSent"]

    def errors(self, since: int = 0) -> list[str]:
        """Console errors and warnings, uncaught exceptions and browser log errors, as text."""
        out = []
        for e in self.events[since:]:
            method, params = e["method"], e["params"]
            if method == "Runtime.exceptionThrown":
                out.append(json.dumps(params["exceptionDetails"])[:500])
            elif method == "Runtime.consoleAPICalled" and params["type"] in ("error", "warning", "assert"):
                out.append(" ".join(str(a.get("value", a.get("description"))) for a in params["args"]))
            elif method == "Log.entryAdded" and params["entry"]["level"] in ("error", "warning"):
                out.append(params["entry"]["text"])
        return out
