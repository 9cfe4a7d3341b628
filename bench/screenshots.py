#!/usr/bin/env python3
"""Make the README's screenshots (docs/img/) from the real site.

    .venv/bin/python bench/screenshots.py [--out docs/img]

Builds the repository's site with `mkdocs build --strict` into a temporary
folder, serves it on 127.0.0.1 and photographs it with headless Chromium
(/usr/bin/chromium and chromedriver, through Selenium from the test extras),
with every other host unresolvable: what the pictures show works offline.
Light and dark pictures use the palette toggle, as a reader would.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VARIANT = "harbor-5--friendly--plan--workspace-write"

# (file name, page, scheme, window height, what to do on the page)
SHOTS = [
    ("matrix.png", "prompts/", "default", 1000, None),
    ("variant.png", f"prompts/variants/{VARIANT}/", "default", 1500, None),
    ("variant-dark.png", f"prompts/variants/{VARIANT}/", "slate", 1500, "#tokens-and-send-order"),
    ("explorer.png", "prompts/explorer/#variant=harbor-5/friendly/plan/workspace-write", "default", 1100, "find"),
    ("assembly-dark.png", "prompts/assembly/", "slate", 1000, None),
]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    args = parser.parse_args(argv)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp) / "site"
        env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
        subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(site)], cwd=ROOT, env=env, check=True)
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        base = f"http://127.0.0.1:{server.server_address[1]}"
        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", f"--user-data-dir={tmp}/profile",
                     "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"):
            options.add_argument(flag)
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        try:
            args.out.mkdir(parents=True, exist_ok=True)
            for name, page, scheme, height, action in SHOTS:
                driver.set_window_size(1400, height)
                driver.get(f"{base}/{page}")
                WebDriverWait(driver, 30).until(lambda d: d.execute_script("return document.readyState") == "complete")
                current = driver.execute_script("return document.body.getAttribute('data-md-color-scheme')")
                if current != scheme:
                    driver.find_element(By.CSS_SELECTOR, "form[data-md-component=palette] label:not([hidden])").click()
                    WebDriverWait(driver, 10).until(
                        lambda d: d.execute_script("return document.body.getAttribute('data-md-color-scheme')") == scheme)
                if action == "find":
                    WebDriverWait(driver, 30).until(lambda d: d.execute_script(
                        "return document.querySelector('.promptspec-explorer').getAttribute('data-ready')"))
                    driver.find_element(By.CSS_SELECTOR, ".pse-find > summary").click()
                    driver.find_element(By.CSS_SELECTOR, ".pse-find-input").send_keys("which callers depend")
                    time.sleep(0.5)
                elif action:
                    driver.execute_script("document.querySelector(arguments[0]).scrollIntoView()", action)
                time.sleep(0.3)
                driver.save_screenshot(str(args.out / name))
                print(f"wrote {args.out / name}")
        finally:
            driver.quit()
            server.shutdown()
            server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
