"""A headless Chromium driven by Selenium (Debian's chromium and chromium-driver), for the web
view's tests: tests/unit/test_webview_browser.py and tests/integration/test_webview_mininet.py
(which imports this module; it imports nothing from either conftest)."""
import contextlib
import shutil
import tempfile

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--window-size=1400,900")


@contextlib.contextmanager
def chromium():
    """A WebDriver with the browser console log enabled (``get_log("browser")``), and a fresh
    profile directory removed afterwards."""
    from selenium import webdriver  # pylint: disable=import-outside-toplevel
    from selenium.webdriver.chrome.service import Service  # pylint: disable=import-outside-toplevel
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    profile = tempfile.mkdtemp(prefix="sdnmpi-chromium-")
    options.add_argument("--user-data-dir=" + profile)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    try:
        driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
        try:
            yield driver
        finally:
            driver.quit()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


def console_errors(driver):
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]


def halo_ends(driver):
    """The switch ports ("DPID:PORT") the web view highlights, read in one go (the page redraws)."""
    return set(driver.execute_script(
        'return Array.from(document.querySelectorAll("#halos line.halo"))'
        '.flatMap((h) => h.getAttribute("data-out").split(" ")).filter((e) => e);'))
