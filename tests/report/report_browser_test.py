#!/usr/bin/env python3
"""`attnscan report` opened in real headless Chromium (Selenium + chromedriver), and `attnscan plot`.

  report_browser_test.py ATTNSCAN_BINARY SCREENSHOT_DIR TEST_NAME   ("all" runs each)

Exit 0 on success, 1 on failure, 77 when something needed is absent (the message says what).
"""
import atexit
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "support"))
from harness import Skip, fine_tuned_copy, model_dir  # noqa: E402
from harness import main as harness_main  # noqa: E402
from conllu_reference import read_conllu  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BIN = SHOTS = WORK = None
CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
# Nothing may leave loopback: a proxy that does not exist, and no background traffic.
CHROME_ARGS = ["--headless=new", "--no-sandbox", "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>",
               "--disable-background-networking", "--window-size=1400,1000", "--disable-dev-shm-usage"]





def run(*args, check=True):
    p = subprocess.run([BIN, *args], cwd=ROOT, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise AssertionError(f"attnscan {' '.join(args)} failed ({p.returncode}):\n{p.stderr}")
    return p


def out(name):
    return os.path.join(WORK, name)


def sample_run(name="sample.h5", *sets):
    path = out(name)
    args = ["run", "-c", "configs/default.yaml", "-o", path, "--no-progress"]
    for s in sets:
        args += ["--set", s]
    run(*args)
    return path


def chromium_tmp():
    """A TMPDIR for Chromium, removed when this script exits: Chromium leaves its singleton socket's folder
    there. Short, as the socket's path must fit a unix socket's 108 bytes (a test's folder may not)."""
    tmp = tempfile.mkdtemp(prefix="attnscan_chromium_")
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)
    return tmp


def browser(download_dir=None):
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        raise Skip("python3-selenium is not installed (the README's test command installs it)")
    if not (os.path.exists(CHROMIUM) and os.path.exists(CHROMEDRIVER)):
        raise Skip(f"{CHROMIUM} or {CHROMEDRIVER} missing (Debian chromium, chromium-driver)")
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for a in CHROME_ARGS:
        opts.add_argument(a)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    if download_dir:
        opts.add_experimental_option("prefs", {"download.default_directory": download_dir,
                                               "download.prompt_for_download": False})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER, env={**os.environ, "TMPDIR": chromium_tmp()}), options=opts)
    if download_dir:
        driver.execute_cdp_cmd("Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": download_dir})
    return driver


def open_report(driver, html):
    url = "file://" + os.path.abspath(html)
    driver.get(url)
    for _ in range(100):
        if driver.execute_script("return document.body.dataset.ready") == "1":
            return url
        time.sleep(0.05)
    raise AssertionError("the report's script did not finish (document.body.dataset.ready)")


def assert_offline_and_clean(driver, url):
    """No console errors, and no request other than the page itself (data:/blob: are not network)."""
    severe = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    assert not severe, severe
    requests = []
    for entry in driver.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        if msg["method"] == "Network.requestWillBeSent":
            u = msg["params"]["request"]["url"]
            if u != url and not u.startswith(("data:", "blob:")):
                requests.append(u)
    assert not requests, requests


def tooltip_numbers(driver, cell):
    from selenium.webdriver.common.action_chains import ActionChains
    ActionChains(driver).move_to_element(cell).perform()
    text = driver.find_element("id", "tooltip").text
    m = re.search(r"layer (\d+), head (\d+) \(0-indexed\)\nmean (\S+)\n95% CI \[(\S+), (\S+)\]\nn (\S+)\n"
                  r"baseline (\S+)\nlift (\S+)", text)
    assert m, text
    return m.groups()


def close(a, b, decimals):
    if a == "n/a":
        return not np.isfinite(b)
    return abs(float(a) - float(b)) <= 0.5 * 10 ** -decimals + 1e-7


def check_heatmap_tooltips(driver, h5, all_cells_of_first=True):
    f = h5py.File(h5, "r")
    L, H = f["attention"].attrs["model_layers"], f["attention"].attrs["model_heads"]
    figures = driver.find_elements("css selector", "#overview .figure.heatmap")
    outputs = list(f["scores"].attrs["outputs"])
    assert len(figures) == len(outputs), (len(figures), outputs)
    hovered = 0
    for n, (fig, key) in enumerate(zip(figures, outputs)):
        cells = fig.find_elements("css selector", "rect.cell")
        assert len(cells) == L * H, (key, len(cells))
        g = f[f"scores/{key}"]
        mean, lo, hi, count, base = (g[x][...] for x in ("mean", "ci_low", "ci_high", "count", "baseline_mean"))
        picks = range(L * H) if (n == 0 and all_cells_of_first) else range(n % 13, L * H, 13)  # ~0.3 s a hover
        for k in picks:
            l, h, m, a, b, c, bl, lift = tooltip_numbers(driver, cells[k])
            l, h = int(l), int(h)
            assert (l, h) == divmod(k, H), (key, k, l, h)
            assert close(m, mean[l, h], 4) and close(a, lo[l, h], 4) and close(b, hi[l, h], 4), (key, l, h, m, a, b)
            assert int(float(c)) == int(count[l, h]) and close(bl, base[l, h], 4), (key, l, h, c, bl)
            assert close(lift, mean[l, h] / base[l, h], 2), (key, l, h, lift)
            hovered += 1
    print(f"{len(figures)} heatmaps of {L}x{H} cells; {hovered} tooltips equal the file's aggregates")


def check_top_heads_tables(driver, h5):
    """Each pattern section's table holds the numbers `attnscan heads` prints."""
    heads = json.loads(run("heads", h5, "--top", "3", "--format", "json").stdout)["heads"]
    sections = driver.find_elements("css selector", "section.pattern")
    assert len(sections) == len({(h["detector"], h["output"]) for h in heads})
    for s in sections:
        key = s.get_attribute("data-key")
        rows = [r.find_elements("css selector", "td") for r in s.find_elements("css selector", "table.top-heads tr")[1:]]
        want = [h for h in heads if f"{h['detector']}/{h['output']}" == key]
        assert len(rows) == len(want) == 3, (key, len(rows))
        for cells, h in zip(rows, want):
            text = [c.text for c in cells]
            assert text[1] == f"{h['layer']}-{h['head']}" and close(text[2], h["mean"], 4), (key, text, h)
            assert int(text[4]) == int(h["count"]) and close(text[6], h["lift"], 2), (key, text, h)


def lines(fig):
    """(query, key, layer, head) of every line the head view draws (read in one call: lines are many)."""
    got = fig.parent.execute_script(
        "return Array.from(arguments[0].querySelectorAll('line.att')).map((e) => "
        "[+e.dataset.q, +e.dataset.k, +e.dataset.layer, +e.dataset.head]);", fig)
    return [tuple(x) for x in got]


def wait_for_file(folder, suffix, timeout=10):
    for _ in range(int(timeout / 0.1)):
        done = [n for n in os.listdir(folder) if n.endswith(suffix)]
        if done:
            path = os.path.join(folder, done[0])
            time.sleep(0.2)
            return path
        time.sleep(0.1)
    raise AssertionError(f"no {suffix} download in {folder}: {os.listdir(folder)}")


def png_size(path):
    with open(path, "rb") as fh:
        head = fh.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n", head[:8]
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def screenshot_sections(driver, prefix):
    os.makedirs(SHOTS, exist_ok=True)
    for s in driver.find_elements("css selector", "section"):
        driver.execute_script("arguments[0].scrollIntoView()", s)
        s.screenshot(os.path.join(SHOTS, f"{prefix}-{s.get_attribute('id')}.png"))


# --- tests -------------------------------------------------------------------------------------------

def test_report_in_browser():
    """Offline, tooltips = aggregates, head view interactions, exports, screenshots."""
    model_dir()
    h5 = sample_run()
    html = out("report.html")
    run("report", h5, "-o", html)
    downloads = out("downloads")
    os.makedirs(downloads)
    driver = browser(downloads)
    try:
        url = open_report(driver, html)
        assert_offline_and_clean(driver, url)
        check_heatmap_tooltips(driver, h5)
        check_top_heads_tables(driver, h5)
        # The model view's head view shows the seed pair; use it for the interactions.
        fig = driver.find_element("css selector", "#model-view .figure.headview")
        with h5py.File(h5, "r") as f:
            n = int(f["examples/n_tokens"][0])
            t = int(f["examples/token_offset"][0])
            segment = f["tokens/segment"][t:t + n]
        left = fig.find_elements("css selector", "text.token.left")
        assert len(left) == n
        left[3].click()  # click keeps the selection even after the pointer leaves
        driver.find_element("css selector", "h1").click()
        drawn = lines(fig)
        assert drawn and all(q == 3 for q, _, _, _ in drawn), drawn[:5]
        left[3].click()
        driver.find_element("css selector", "h1").click()
        assert {q for q, _, _, _ in lines(fig)} != {3}
        fig.find_element("css selector", "input.filter[value='A->B']").click()
        drawn = lines(fig)
        assert drawn and all(segment[q] == 0 and segment[k] == 1 for q, k, _, _ in drawn), drawn[:5]
        fig.find_element("css selector", "input.filter[value='All']").click()
        from selenium.webdriver.support.ui import Select
        Select(fig.find_element("css selector", "select.layer-select")).select_by_value("3")
        for s in fig.find_elements("css selector", ".strip span"):  # exactly heads 1 and 4
            on = "on" in s.get_attribute("class")
            if on != (int(s.get_attribute("data-head")) in (1, 4)):
                s.click()
        drawn = lines(fig)
        assert {(layer, head) for _, _, layer, head in drawn} == {(3, 1), (3, 4)}, set((a, b) for _, _, a, b in drawn)
        # Exports: a heatmap and the head view just drawn.
        heat = driver.find_element("css selector", "#overview .figure.heatmap")
        heat.find_element("css selector", "button.export-svg").click()
        svg = wait_for_file(downloads, ".svg")
        assert os.path.basename(svg) == "next_token-next_token-heatmap.svg", svg
        root = ET.parse(svg).getroot()
        assert root.tag.endswith("svg") and len([e for e in root.iter() if e.get("class") == "cell"]) == 72
        heat.find_element("css selector", "button.export-png").click()
        png = wait_for_file(downloads, ".png")
        w, h = png_size(png)
        assert w > 100 and h > 100 and os.path.getsize(png) > 1000, (w, h)
        for name in os.listdir(downloads):
            os.remove(os.path.join(downloads, name))
        fig.find_element("css selector", "button.export-svg").click()
        svg = wait_for_file(downloads, ".svg")
        assert os.path.basename(svg).endswith("-L3-H1_4.svg") or os.path.basename(svg).endswith("-L3-H4_1.svg"), svg
        heads = {e.get("data-head") for e in ET.parse(svg).getroot().iter() if e.get("class") == "att"}
        assert heads == {"1", "4"}, heads
        fig.find_element("css selector", "button.export-png").click()
        assert png_size(wait_for_file(downloads, ".png"))[0] > 100
        assert_offline_and_clean(driver, url)
        screenshot_sections(driver, "sample")
        seed_pair_head_view(driver, h5)
    finally:
        driver.quit()


def seed_pair_head_view(driver, h5):
    """The README picture: the seed pair's head view on the top next-token head."""
    top = json.loads(run("heads", h5, "--detector", "next_token", "--top", "1", "--format", "json").stdout)["heads"][0]
    fig = driver.find_element("css selector", "#model-view .figure.headview")
    from selenium.webdriver.support.ui import Select
    Select(fig.find_element("css selector", "select.layer-select")).select_by_value(str(top["layer"]))
    for s in fig.find_elements("css selector", ".strip span"):
        if ("on" in s.get_attribute("class")) != (int(s.get_attribute("data-head")) == top["head"]):
            s.click()
    driver.execute_script("arguments[0].scrollIntoView()", fig)
    fig.screenshot(os.path.join(SHOTS, "seed-pair-next-token-head-view.png"))


def test_report_without_attention_and_with_subsets():
    """Scores-only files and stored subsets: the views say what is missing, the heatmaps still work."""
    model_dir()
    scores_only = sample_run("scores_only.h5", "output.attention_every=0")
    subset = sample_run("subset.h5", "output.layers=0,5", "output.heads=2-4", "output.attention_every=3")
    driver = browser()
    try:
        for h5, expect in ((scores_only, "holds no attention"), (subset, "Only layers 0,5 and heads 2,3,4 were stored")):
            html = h5[:-3] + ".html"
            run("report", h5, "-o", html)
            url = open_report(driver, html)
            assert_offline_and_clean(driver, url)
            notes = " ".join(e.text for e in driver.find_elements("css selector", ".note"))
            assert expect in notes, notes
            check_heatmap_tooltips(driver, h5, all_cells_of_first=False)
            if h5 == subset:
                assert "Attention is stored for 4 of 10 pairs" in notes, notes
                fig = driver.find_element("css selector", "#model-view .figure.headview")
                assert {e.get_attribute("value") for e in fig.find_elements("css selector", "option")} == {"0", "5"}
            else:
                assert not driver.find_elements("css selector", ".figure.headview svg")
            screenshot_sections(driver, os.path.basename(h5)[:-3])
    finally:
        driver.quit()


def labelled_sample(name, labels, extra_sets=()):
    data = out(name + ".tsv")
    with open(os.path.join(ROOT, "data", "sample_pairs.tsv")) as src, open(data, "w") as dst:
        rows = src.read().splitlines()
        dst.write(rows[0] + "\tlabel\n")
        for row, label in zip(rows[1:], labels):
            dst.write(f"{row}\t{label}\n")
    path = out(name + ".h5")
    run("run", "--set", "dataset.path=" + data, "--set", "dataset.label=label", *extra_sets,
        "--set", "detectors=next_token,delimiter", "-o", path, "--no-progress")
    return path


def test_report_label_groups():
    """Per-group heatmaps and the difference of two groups equal numpy's group means."""
    model_dir()
    labels = ["para", "para", "other", "para", "other", "para", "other", "para", "para", "other"]
    h5 = labelled_sample("labelled", labels)
    html = out("labelled.html")
    run("report", h5, "-o", html)
    driver = browser()
    try:
        url = open_report(driver, html)
        assert_offline_and_clean(driver, url)
        section = driver.find_element("id", "labels")
        assert "other (4 pairs)" in section.text and "para (6 pairs)" in section.text, section.text
        with h5py.File(h5, "r") as f:
            v = f["scores/next_token/next_token/values"][...]
        lab = np.array(labels)
        other, para = np.nanmean(v[lab == "other"], axis=0), np.nanmean(v[lab == "para"], axis=0)
        figs = {e.get_attribute("data-name"): e for e in section.find_elements("css selector", ".figure.heatmap")}
        for name, expect in (("next_token-next_token-label-other-heatmap", other),
                             ("next_token-next_token-label-para-heatmap", para),
                             ("next_token-next_token-difference-heatmap", para - other)):
            cells = figs[name].find_elements("css selector", "rect.cell")
            got = np.array([float(c.get_attribute("data-mean")) for c in cells]).reshape(expect.shape)
            assert np.abs(got - expect).max() < 1e-6, (name, np.abs(got - expect).max())
        screenshot_sections(driver, "labelled")
    finally:
        driver.quit()
    scored = labelled_sample("scored", [0.1, 0.7, 1.3, 2.2, 2.9, 3.3, 3.8, 4.1, 4.6, 5.0], ["--set", "dataset.label_type=number"])
    run("report", scored, "-o", out("scored.html"))
    assert "rerun the report with --bins K" in open(out("scored.html")).read()
    run("report", scored, "-o", out("binned.html"), "--bins", "2")
    assert '"name":"[0.1, 2.55)"' in open(out("binned.html")).read()


def test_report_compare_and_similarity():
    """--compare B.h5: difference heatmaps marking exactly the heads `attnscan compare` finds at q < 0.05;
    the head-similarity embedding once `attnscan similarity` ran."""
    model_dir()
    a = sample_run("fp32.h5")
    b = sample_run("tuned.h5", "model=" + fine_tuned_copy(out("tuned-model")))
    run("similarity", a)
    html = out("compare.html")
    run("report", a, "--compare", b, "-o", html)
    tests = json.loads(run("compare", a, b, "--top", "0", "--format", "json").stdout)["heads"]
    driver = browser()
    try:
        url = open_report(driver, html)
        assert_offline_and_clean(driver, url)
        figs = driver.find_elements("css selector", "#comparison .figure.heatmap")
        assert len(figs) == 9, len(figs)
        for fig in figs:
            key = fig.get_attribute("data-name").replace("-compare-heatmap", "")
            det, output = key.split("-", 1)
            marked = driver.execute_script(
                "return Array.from(arguments[0].querySelectorAll('rect.cell[data-significant]')).map("
                "(c) => [+c.dataset.layer, +c.dataset.head]);", fig)
            want = sorted([h["layer"], h["head"]] for h in tests
                          if h["detector"] == det and h["output"] == output and h["q"] is not None and h["q"] < 0.05)
            assert sorted(marked) == want, (key, len(marked), len(want))
            assert len(fig.find_elements("css selector", "rect.cell")) == 72
        points = driver.find_elements("css selector", "#similarity circle.head-point")
        assert len(points) == 72, len(points)
        assert {p.get_attribute("data-layer") for p in points} == {str(i) for i in range(6)}
        screenshot_sections(driver, "compare")
    finally:
        driver.quit()


def test_report_importance():
    """Head importance (importance.ablation, importance.gradient on the real MiniLM with a random classifier): one
    scatter per detector output and importance kind, one point per head placed by the file's mean pattern score (x)
    and mean importance (y), the three strongest heads of each labelled, tooltips with the file's numbers; the
    importance outputs get their own "Importance:" sections."""
    fixtures = os.environ.get("ATTNSCAN_FIXTURE_DIR") or os.path.join(os.path.dirname(os.path.dirname(BIN)), "fixtures")
    model = os.path.join(fixtures, "importance", "minilm-classifier", "model")
    paws = os.path.join(ROOT, "..", "shared", "datasets", "paws", "dev.tsv")
    if not os.path.exists(os.path.join(model, "model.safetensors")) or not os.path.exists(paws):
        raise Skip(f"{model} (tests/reference/make_importance_fixtures.py) or {paws} missing")
    h5 = out("importance.h5")
    run("run", "--set", "dataset.path=" + paws, "--set", "dataset.label=label", "--set", "dataset.max_rows=16",
        "--model", model, "--set", "detectors=next_token,delimiter", "--set", "importance.ablation=true",
        "--set", "importance.gradient=classification", "-o", h5, "--no-progress")
    html = out("importance.html")
    run("report", h5, "-o", html)
    f = h5py.File(h5, "r")
    patterns = ["next_token/next_token", "delimiter/cls", "delimiter/sep", "delimiter/cls_or_sep"]
    driver = browser()
    try:
        url = open_report(driver, html)
        assert_offline_and_clean(driver, url)
        figs = driver.find_elements("css selector", "#importance .figure.importance-scatter")
        assert len(figs) == len(patterns) * 2, len(figs)
        titles = [h.text for h in driver.find_elements("css selector", "section.pattern h2")]
        assert "Importance: importance/ablation" in titles and "Importance: importance/gradient" in titles, titles
        for fig in figs:
            pattern, imp = fig.get_attribute("data-pattern"), fig.get_attribute("data-importance")
            x = f[f"scores/{pattern}/mean"][...].ravel()
            y = f[f"scores/{imp}/mean"][...].ravel()
            points = driver.execute_script(
                "return Array.from(arguments[0].querySelectorAll('circle.head-point')).map((c) => "
                "[+c.dataset.layer * 12 + +c.dataset.head, +c.getAttribute('cx'), +c.getAttribute('cy')]);", fig)
            assert len(points) == 72, (pattern, imp, len(points))
            k = np.array([p[0] for p in points])
            cx, cy = np.array([p[1] for p in points]), np.array([p[2] for p in points])
            # positions are the file's numbers on linear axes: x grows with the score, y (down the page) shrinks
            assert np.allclose(np.polyfit(x[k], cx, 1)[0] * (x[k] - x[k].mean()), cx - cx.mean(), atol=1e-3), pattern
            assert np.allclose(np.polyfit(y[k], cy, 1)[0] * (y[k] - y[k].mean()), cy - cy.mean(), atol=1e-3), imp
            labels = {t.text for t in fig.find_elements("css selector", "text.head-label")}
            want = {f"{i // 12}-{i % 12}" for i in list(np.argsort(-x)[:3]) + list(np.argsort(-y)[:3])}
            assert labels == want, (pattern, imp, labels, want)
        from selenium.webdriver.common.action_chains import ActionChains
        first = figs[0].find_elements("css selector", "circle.head-point")[5]
        ActionChains(driver).move_to_element(first).perform()
        text = driver.find_element("id", "tooltip").text
        # points may overlap: the tooltip names the head under the pointer
        m = re.search(r"layer (\d+), head (\d+) \(0-indexed\)\nnext_token/next_token: (\S+)\nimportance/ablation: (\S+)", text)
        l, h = int(m.group(1)), int(m.group(2))
        assert m and close(m.group(3), f["scores/next_token/next_token/mean"][l, h], 4) and \
            close(m.group(4), f["scores/importance/ablation/mean"][l, h], 6), text
        screenshot_sections(driver, "importance")
    finally:
        driver.quit()


def set_threshold(driver, fig, value):
    driver.execute_script("const s = arguments[0].querySelector('input.threshold'); s.value = arguments[1];"
                          "s.dispatchEvent(new Event('input'));", fig, value)


def drawn_values(driver, fig, want_map):
    """{(query, key): value} of the lines the head view draws; every line must be of map `want_map`."""
    got = driver.execute_script(
        "return Array.from(arguments[0].querySelectorAll('line.att')).map((e) => "
        "[+e.dataset.q, +e.dataset.k, e.dataset.map, e.dataset.w]);", fig)
    assert got and {m for _, _, m, _ in got} == {want_map}, (want_map, got[:3])
    return {(q, k): float(w) for q, k, _, w in got}


def as_matrix(values, n):
    """{(query, key): value} as an [n, n] array (0 where no line is drawn)."""
    got = np.zeros((n, n))
    for (q, k), w in values.items():
        got[q, k] = w
    return got


def drawn_matrix(driver, fig, want_map, n):
    """The head view's lines (all of map `want_map`) as an [n, n] array."""
    return as_matrix(drawn_values(driver, fig, want_map), n)


def pick_heads(fig, wanted):
    for s in fig.find_elements("css selector", ".strip span"):
        if ("on" in s.get_attribute("class")) != (int(s.get_attribute("data-head")) in wanted):
            s.click()


def test_report_norm_and_rollout_maps():
    """A file with value norms and rollout: the head and model views switch to norm-weighted attention
    (the drawn values equal numpy's alpha_ij*||f_h(x_j)||, rows normalised), a rollout view per layer
    (L maps, rows sum to 1, equal to the stored rollout), scores of map: norm/rollout labelled with their
    map; a file without them has no switch and says which options store them."""
    model_dir()
    cfg = out("maps.yaml")
    with open(cfg, "w") as f:
        f.write(f"dataset:\n  path: {os.path.join(ROOT, 'data', 'sample_pairs.tsv')}\n  sentence_a: sentence1\n"
                "  sentence_b: sentence2\noutput:\n  dtype: float16\n  value_norms: true\n  rollout: true\n"
                "detectors:\n  - next_token\n  - {name: next_token, as: next_token_norm, map: norm}\n"
                "  - {name: delimiter, as: delimiter_rollout, map: rollout}\n")
    h5, html = out("maps.h5"), out("maps.html")
    run("run", "-c", cfg, "-o", h5, "--no-progress")
    run("report", h5, "-o", html)
    plain = sample_run("plain.h5", "detectors=next_token")
    run("report", plain, "-o", out("plain.html"))
    subset, subset_html = out("subset.h5"), out("subset.html")
    run("run", "-c", cfg, "-o", subset, "--no-progress", "--set", "output.layers=0,5", "--set", "output.heads=2-4",
        "--set", "output.attention_every=3", "--set", "detectors=next_token")
    run("report", subset, "-o", subset_html)
    page = open(subset_html, encoding="utf-8").read()
    data = json.loads(re.search(r'id="attnscan-data">(.*?)</script>', page, re.S).group(1))
    with h5py.File(subset, "r") as f:
        checked = 0
        for pos, ex in data["examples"].items():
            i = int(pos)
            st, sn, so = (int(f[x][i]) for x in ("examples/token_offset", "examples/n_tokens", "examples/attention_offset"))
            if so < 0:
                assert ex["norm_weighted"] is None
                continue
            a = f["attention/values"][so:so + 2 * 3 * sn * sn].astype(np.float64).reshape(2, 3, sn, sn)
            v = f["tokens/value_norm"][st:st + sn][:, [0, 5]][:, :, [2, 3, 4]].astype(np.float64).transpose(1, 2, 0)
            w = a * v[:, :, None, :]
            w /= w.sum(axis=-1, keepdims=True)
            page_w = np.frombuffer(base64.b64decode(ex["norm_weighted"]), dtype=np.uint8).reshape(2, 3, sn, sn) / 255
            assert np.abs(page_w - w).max() <= 0.5 / 255 + 1e-6, (i, np.abs(page_w - w).max())
            checked += 1
        assert checked, "no shown example of the subset file has stored attention"
    with h5py.File(h5, "r") as f:
        L, H = int(f["attention"].attrs["model_layers"]), int(f["attention"].attrs["model_heads"])
        ntok = f["examples/n_tokens"][...].astype(np.int64)
        n, t, o = int(ntok[0]), int(f["examples/token_offset"][0]), int(f["examples/attention_offset"][0])
        A = f["attention/values"][o:o + L * H * n * n].astype(np.float64).reshape(L, H, n, n)
        norms = f["tokens/value_norm"][t:t + n].astype(np.float64).transpose(1, 2, 0)  # [L, H, n]
        R = f["rollout/values"][0:L * n * n].astype(np.float64).reshape(L, n, n)  # example 0 starts at 0
    assert np.allclose(R.sum(axis=-1), 1, atol=1e-5)
    layer, head = 2, 5

    def norm_weighted(a):  # docs/analyses.md: alpha_ij * ||f_h(x_j)||, each row normalised to sum 1
        w = a * norms[layer, head][None, :]
        return w / w.sum(axis=1, keepdims=True)
    exact = norm_weighted(A[layer, head])
    os.makedirs(SHOTS, exist_ok=True)
    driver = browser()
    try:
        url = open_report(driver, html)
        assert_offline_and_clean(driver, url)
        assert not driver.find_elements("css selector", ".map-note")
        assert "value norms (norm-weighted maps), attention rollout" in driver.find_element("id", "overview").text
        # Scores labelled with their map wherever outputs are listed.
        titles = [e.text for e in driver.find_elements("css selector", "#overview .figure .title")]
        assert "next_token_norm/next_token [norm-weighted map]: mean score" in titles, titles
        assert "delimiter_rollout/cls [rollout map]: per layer" in titles, titles
        assert "next_token/next_token: mean score" in titles, titles
        sections = {s.get_attribute("data-key"): s for s in driver.find_elements("css selector", "section.pattern")}
        assert sections["next_token_norm/next_token"].find_element("css selector", "h2").text == \
            "Pattern: next_token_norm/next_token [norm-weighted map]"
        assert "map: norm" in sections["next_token_norm/next_token"].text
        assert "[" not in sections["next_token/next_token"].find_element("css selector", "h2").text
        nav = driver.find_element("id", "nav").text
        assert "delimiter_rollout/sep [rollout map]" in nav, nav
        # A pattern scored on a map opens its head views on that map.
        assert {f.get_attribute("data-map") for f in sections["next_token_norm/next_token"].find_elements(
            "css selector", ".figure.headview")} == {"norm"}
        assert {f.get_attribute("data-map") for f in sections["delimiter_rollout/cls"].find_elements(
            "css selector", ".figure.headview")} == {"rollout"}
        # The model view's head view (example 0): weights, then norm-weighted, then rollout.
        fig = driver.find_element("css selector", "#model-view .figure.headview")
        radios = [r.get_attribute("value") for r in fig.find_elements("css selector", "input.map")]
        assert radios == ["weights", "norm", "rollout"], radios
        from selenium.webdriver.support.ui import Select
        Select(fig.find_element("css selector", "select.layer-select")).select_by_value(str(layer))
        pick_heads(fig, {head})
        set_threshold(driver, fig, 0)
        weights = drawn_values(driver, fig, "weights")
        got = as_matrix(weights, n)
        assert np.abs(got - A[layer, head]).max() <= 0.5 / 255 + 6e-5, np.abs(got - A[layer, head]).max()
        fig.find_element("css selector", "input.map[value='norm']").click()
        assert fig.get_attribute("data-map") == "norm"
        values = drawn_values(driver, fig, "norm")
        assert set(values) == {(q, k) for q in range(n) for k in range(n) if np.round(exact[q, k] * 255) > 0}
        got = as_matrix(values, n)
        error = np.abs(got - exact).max()  # one byte per value in the page, 4 decimals in data-w
        changed = np.abs(exact - A[layer, head]).max()
        print(f"norm-weighted layer {layer} head {head}: max |drawn - numpy| {error:.5f}; max |numpy - weights| {changed:.3f}")
        assert error <= 0.5 / 255 + 6e-5 and changed > 0.05, (error, changed)
        fig.find_element("css selector", "input.map[value='rollout']").click()
        options = [e.get_attribute("value") for e in fig.find_elements("css selector", "select.layer-select option")]
        assert options == [str(l) for l in range(L)], options
        assert "disabled" in fig.find_element("css selector", ".strip").get_attribute("class")
        worst = worst_sum = 0.0
        for l in range(L):
            Select(fig.find_element("css selector", "select.layer-select")).select_by_value(str(l))
            got = drawn_matrix(driver, fig, "rollout", n)
            worst = max(worst, float(np.abs(got - R[l]).max()))
            worst_sum = max(worst_sum, float(np.abs(got.sum(axis=1) - 1).max()))
        print(f"rollout of {L} layers: max |drawn - stored| {worst:.5f}, max |row sum - 1| {worst_sum:.4f} (n {n})")
        assert worst <= 0.5 / 255 + 6e-5 and worst_sum <= n * (0.5 / 255 + 6e-5), (worst, worst_sum)
        driver.execute_script("arguments[0].scrollIntoView()", fig)
        fig.screenshot(os.path.join(SHOTS, "maps-rollout-head-view.png"))
        # The model view: L rollout maps; its switch repaints the grid, and a map opens on that map.
        model = driver.find_element("css selector", "#model-view .figure.modelview")
        assert len(model.find_elements("css selector", "canvas.rollout-map")) == L
        assert len(model.find_elements("css selector", "canvas.head-map")) == L * H
        # The legend's scale: white at 0, the palette's last colour at each map's strongest value.
        legend = model.find_element("css selector", ".map-legend")
        assert "0 to the map's strongest value" in legend.text, legend.text
        darkest = driver.execute_script(
            "const c = arguments[0].querySelector('canvas.head-map'), d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;"
            "let best = [255, 255, 255]; for (let i = 0; i < d.length; i += 4) if (d[i] + d[i + 1] + d[i + 2] < best[0] + best[1] + best[2]) best = [d[i], d[i + 1], d[i + 2]];"
            "return best;", model)
        end = driver.execute_script("return JSON.parse(document.getElementById('attnscan-data').textContent).palette.diverging.slice(-1)[0];")
        assert darkest == [int(end[i:i + 2], 16) for i in (1, 3, 5)], (darkest, end)
        pixels = "return Array.from(arguments[0].querySelectorAll('canvas.head-map')).map((c) => c.toDataURL());"
        before = driver.execute_script(pixels, model)
        model.find_element("css selector", "input.map[value='norm']").click()
        after = driver.execute_script(pixels, model)
        assert model.get_attribute("data-map") == "norm" and sum(a != b for a, b in zip(before, after)) > L * H // 2
        model.find_element("css selector", f"canvas.head-map[data-layer='{layer}'][data-head='{head}']").click()
        fig = driver.find_element("css selector", "#model-view .figure.headview")
        assert fig.get_attribute("data-map") == "norm" and fig.get_attribute("data-heads") == str(head)
        model.find_element("css selector", "canvas.rollout-map[data-layer='3']").click()
        fig = driver.find_element("css selector", "#model-view .figure.headview")
        assert fig.get_attribute("data-map") == "rollout" and fig.get_attribute("data-layer") == "3"
        assert_offline_and_clean(driver, url)
        driver.execute_script("arguments[0].scrollIntoView()", model)
        model.screenshot(os.path.join(SHOTS, "maps-model-view-norm.png"))
        screenshot_sections(driver, "maps")
        # Without norms and rollout: no switch anywhere, and a note naming the options.
        url = open_report(driver, out("plain.html"))
        assert_offline_and_clean(driver, url)
        assert not driver.find_elements("css selector", "input.map") and not driver.find_elements("css selector", "canvas.rollout-map")
        notes = [e.text for e in driver.find_elements("css selector", ".map-note")]
        assert len(notes) == 2 and all("output.value_norms: true" in x and "output.rollout: true" in x for x in notes), notes
        model = driver.find_element("id", "model-view")
        driver.execute_script("arguments[0].scrollIntoView()", model)
        model.screenshot(os.path.join(SHOTS, "maps-absent-model-view.png"))
        # Stored subsets: norm-weighted maps of the stored layers and heads; the rollout of every layer.
        url = open_report(driver, subset_html)
        assert_offline_and_clean(driver, url)
        fig = driver.find_element("css selector", "#model-view .figure.headview")
        assert [e.get_attribute("value") for e in fig.find_elements("css selector", "select.layer-select option")] == ["0", "5"]
        fig.find_element("css selector", "input.map[value='rollout']").click()
        options = [e.get_attribute("value") for e in fig.find_elements("css selector", "select.layer-select option")]
        assert options == [str(l) for l in range(L)], options
        assert len(driver.find_elements("css selector", "#model-view canvas.rollout-map")) == L
    finally:
        driver.quit()


def test_report_context_mixing_maps():
    """A file with value zeroing and ALTI: the head view's switch offers value_zeroing, alti and alti_rollout
    for every model layer (the drawn values equal the stored maps), the model view has a row of L maps for
    each (a click opens it in the head view), a pattern scored with map: alti opens its head views on ALTI,
    and the overview lists the stored maps."""
    model_dir()
    cfg = out("mixing.yaml")
    with open(cfg, "w") as f:
        f.write(f"dataset:\n  path: {os.path.join(ROOT, 'data', 'sample_pairs.tsv')}\n  sentence_a: sentence1\n"
                "  sentence_b: sentence2\noutput:\n  dtype: float16\n  value_zeroing: true\n  alti: true\n"
                "detectors:\n  - next_token\n  - {name: next_token, as: next_token_alti, map: alti}\n")
    h5, html = out("mixing.h5"), out("mixing.html")
    run("run", "-c", cfg, "-o", h5, "--no-progress")
    run("report", h5, "-o", html)
    with h5py.File(h5, "r") as f:
        L = int(f["attention"].attrs["model_layers"])
        n = int(f["examples/n_tokens"][0])
        stored = {k: f[f"{k}/values"][0:L * n * n].astype(np.float64).reshape(L, n, n)  # example 0 starts at 0
                  for k in ("value_zeroing", "alti", "alti_rollout")}
    os.makedirs(SHOTS, exist_ok=True)
    driver = browser()
    try:
        from selenium.webdriver.support.ui import Select
        url = open_report(driver, html)
        assert_offline_and_clean(driver, url)
        assert "value zeroing, ALTI, ALTI rollout" in driver.find_element("id", "overview").text
        sections = {s.get_attribute("data-key"): s for s in driver.find_elements("css selector", "section.pattern")}
        assert sections["next_token_alti/next_token"].find_element("css selector", "h2").text == \
            "Pattern: next_token_alti/next_token [ALTI map]"
        assert "map: alti" in sections["next_token_alti/next_token"].text
        assert {f.get_attribute("data-map") for f in sections["next_token_alti/next_token"].find_elements(
            "css selector", ".figure.headview")} == {"alti"}
        fig = driver.find_element("css selector", "#model-view .figure.headview")
        radios = [r.get_attribute("value") for r in fig.find_elements("css selector", "input.map")]
        assert radios == ["weights", "value_zeroing", "alti", "alti_rollout"], radios
        set_threshold(driver, fig, 0)
        for name, maps in stored.items():
            fig.find_element("css selector", f"input.map[value='{name}']").click()
            options = [e.get_attribute("value") for e in fig.find_elements("css selector", "select.layer-select option")]
            assert options == [str(l) for l in range(L)], options
            assert "disabled" in fig.find_element("css selector", ".strip").get_attribute("class")
            worst = 0.0
            for l in range(L):
                Select(fig.find_element("css selector", "select.layer-select")).select_by_value(str(l))
                got = drawn_matrix(driver, fig, name, n)
                worst = max(worst, float(np.abs(got - maps[l]).max()))
            print(f"{name} of {L} layers: max |drawn - stored| {worst:.5f} (n {n})")
            assert worst <= 0.5 / 255 + 6e-5, (name, worst)
        Select(fig.find_element("css selector", "select.layer-select")).select_by_value("2")
        fig.find_element("css selector", "input.map[value='alti']").click()
        driver.execute_script("arguments[0].scrollIntoView()", fig)
        fig.screenshot(os.path.join(SHOTS, "mixing-alti-head-view.png"))
        model = driver.find_element("css selector", "#model-view .figure.modelview")
        for css in ("canvas.value-zeroing-map", "canvas.alti-map", "canvas.alti-rollout-map"):
            assert len(model.find_elements("css selector", css)) == L, css
        assert not model.find_elements("css selector", "canvas.rollout-map")
        model.find_element("css selector", "canvas.value-zeroing-map[data-layer='3']").click()
        fig = driver.find_element("css selector", "#model-view .figure.headview")
        assert fig.get_attribute("data-map") == "value_zeroing" and fig.get_attribute("data-layer") == "3"
        assert_offline_and_clean(driver, url)
        driver.execute_script("arguments[0].scrollIntoView()", model)
        model.screenshot(os.path.join(SHOTS, "mixing-model-view.png"))
    finally:
        driver.quit()


def test_report_syntax_heads():
    """A dependency run on CoNLL-U trees: the report's syntax-heads table equals `attnscan heads
    --relations`, each row's examples are those where its head finds the most gold words (h5py), the
    head view of a row shows that head with the relation's gold arcs (from the CoNLL-U file, dashed),
    and the detector's 114 outputs get no pattern sections of their own."""
    model_dir()
    conllu = os.path.join(ROOT, "data", "sample_trees.conllu")
    h5, html = out("trees.h5"), out("trees.html")
    run("run", "-o", h5, "--no-progress", "--set", "dataset.format=conllu", "--set", "dataset.path=" + conllu,
        "--set", "detectors=dependency,next_token", "--set", "output.layers=0-3")
    run("report", h5, "-o", html, "--min-words", "2", "--examples", "2")
    page = open(html, encoding="utf-8").read()
    data = json.loads(re.search(r'id="attnscan-data">(.*?)</script>', page, re.S).group(1))
    table = json.loads(run("heads", h5, "--relations", "--min-words", "2", "--format", "json").stdout)["relations"]
    keys = ("relation", "direction", "words", "layer", "head", "best_offset")
    rows = data["syntax"]["rows"]
    assert [tuple(r[k] for k in keys) for r in rows] == [tuple(r[k] for k in keys) for r in table], (rows, table)
    assert all(abs(r["accuracy"] - t["accuracy"]) < 1e-12 and abs(r["baseline"] - t["offset_baseline"]) < 1e-12
               for r, t in zip(rows, table))
    assert [o["key"] for o in data["outputs"]] == ["next_token/next_token"], [o["key"] for o in data["outputs"]]
    trees = [sentences[0] for sentences in read_conllu(conllu)]  # single sentences: (form, head0, relation)
    with h5py.File(h5, "r") as f:
        stored_layers = list(f["attention"].attrs["layers"])
        word_index = f["tokens/word_index"][...]
        offsets, ntok = f["examples/token_offset"][...], f["examples/n_tokens"][...]
        expected_arcs = {}
        for r in rows:
            col = f[f"scores/dependency/{r['relation']}.{r['direction']}"]
            correct = np.rint(col["values"][:, r["layer"], r["head"]] * col["baseline"][:, r["layer"]])
            has = f["examples/attention_offset"][...] >= 0
            ranked = sorted((i for i in range(len(correct)) if has[i] and correct[i] > 0), key=lambda i: -correct[i])
            want = [int(correct[i]) for i in ranked[:2]] if r["layer"] in stored_layers else []
            assert [e["correct"] for e in r["examples"]] == want, (r, want)
            for e in r["examples"]:
                i = e["position"]
                w = word_index[offsets[i]:offsets[i] + ntok[i]]
                pieces = lambda word: [t for t in range(len(w)) if w[t] == word]  # noqa: E731
                arcs = set()
                for d, (_, head, rel) in enumerate(trees[i]):
                    if rel.split(":")[0] != r["relation"] or head < 0 or not pieces(d) or not pieces(head):
                        continue
                    a, b = (pieces(d), pieces(head)) if r["direction"] == "dep_to_head" else (pieces(head), pieces(d))
                    arcs |= {(q, k) for q in a for k in b}
                expected_arcs[(r["relation"], r["direction"], i)] = arcs
    assert any(r["examples"] for r in rows) and any(not r["examples"] for r in rows), "want rows with and without views"
    os.makedirs(SHOTS, exist_ok=True)
    driver = browser()
    try:
        url = open_report(driver, html)
        assert_offline_and_clean(driver, url)
        assert not [s for s in driver.find_elements("css selector", "section.pattern")
                    if s.get_attribute("data-key").startswith("dependency/")]
        section = driver.find_element("id", "syntax-heads")
        shown = driver.find_elements("css selector", "#syntax-heads tr.syntax-row")
        assert len(shown) == len(rows)
        checked = 0
        for k, r in enumerate(rows):
            tr = shown[k]
            cells = [td.text for td in tr.find_elements("css selector", "td")]
            assert cells[:4] == [r["relation"], r["direction"], str(r["words"]), f"{r['layer']}-{r['head']}"], cells
            if not r["examples"] or checked >= 4:
                continue
            tr.click()
            assert "selected" in tr.get_attribute("class")
            figs = section.find_elements("css selector", ".syntax-examples .figure.headview")
            assert len(figs) == len(r["examples"])
            for fig, e in zip(figs, r["examples"]):
                assert (fig.get_attribute("data-layer"), fig.get_attribute("data-heads")) == (str(r["layer"]), str(r["head"]))
                got = driver.execute_script("return Array.from(arguments[0].querySelectorAll('line.gold-arc'))"
                                            ".map((e) => [+e.dataset.q, +e.dataset.k]);", fig)
                assert {tuple(x) for x in got} == expected_arcs[(r["relation"], r["direction"], e["position"])], \
                    (r, e, got)
                assert {q for q, _, _, _ in lines(fig)} and all(h == r["head"] for _, _, _, h in lines(fig))
            checked += 1
        assert checked, "no row with examples was clicked"
        missing = next(k for k, r in enumerate(rows) if not r["examples"])
        shown[missing].click()
        note = section.find_element("css selector", ".syntax-examples .note").text
        assert "No stored attention of layer" in note or "finds a gold word" in note, note
        first = next(k for k, r in enumerate(rows) if r["examples"])
        shown[first].click()
        driver.execute_script("arguments[0].scrollIntoView()", section)
        section.screenshot(os.path.join(SHOTS, "syntax-heads.png"))
        print(f"{len(rows)} relation rows; head views of {checked} rows checked against the CoNLL-U arcs")
    finally:
        driver.quit()


def test_long_example_stays_usable():
    """A pair of 512 tokens: the head view thresholds its lines, the model view draws canvases."""
    model_dir()
    words = ("the quick brown fox jumps over the lazy dog while strawberries ripen in the summer sun " * 40).split()
    data = out("long.tsv")
    with open(data, "w") as f:
        f.write("sentence1\tsentence2\n" + " ".join(words[:300]) + "\t" + " ".join(words[300:600]) + "\n")
    h5 = out("long.h5")
    run("run", "--set", "dataset.path=" + data, "--set", "detectors=next_token", "-o", h5, "--no-progress")
    with h5py.File(h5, "r") as f:
        n = int(f["examples/n_tokens"][0])
    assert n == 512, n
    html = out("long.html")
    run("report", h5, "-o", html)
    driver = browser()
    try:
        t0 = time.time()
        url = open_report(driver, html)
        print(f"512-token report drawn in {time.time() - t0:.2f} s")
        assert_offline_and_clean(driver, url)
        fig = driver.find_element("css selector", "#model-view .figure.headview")
        threshold = float(fig.find_element("css selector", "input.threshold").get_attribute("value"))
        drawn = len(lines(fig))
        print(f"head view of 512 tokens: {drawn} lines at the default minimum weight {threshold:.4f}")
        assert 0 < drawn <= 512 * 20 and threshold >= 1 / 255, (drawn, threshold)
        canvases = driver.find_elements("css selector", "#model-view .modelview canvas")
        assert len(canvases) == 72 and canvases[0].get_attribute("width") == "152"  # 512 max-pooled to 152
        screenshot_sections(driver, "long")
        for name, css in (("long-head-view.png", "#model-view .figure.headview"), ("long-model-view-grid.png", "#model-view .modelview")):
            figure = driver.find_element("css selector", css)
            driver.execute_script("arguments[0].scrollIntoView()", figure)
            figure.screenshot(os.path.join(SHOTS, name))
    finally:
        driver.quit()


def test_byte_level_tokens_read_as_text():
    """A RoBERTa model's byte-level BPE tokens in the head view: "Ġstore" shown as "▁store", the bytes of
    "é" as "é", a character split between tokens as <0xNN>; the vocabulary token in the tooltip."""
    fixtures = os.environ.get("ATTNSCAN_FIXTURE_DIR") or os.path.join(os.path.dirname(os.path.dirname(BIN)), "fixtures")
    model = os.path.join(fixtures, "families", "roberta", "model")
    if not os.path.exists(os.path.join(model, "model.safetensors")):
        raise Skip(f"{model} missing: made by tests/reference/make_family_fixtures.py during the README test command")
    data = out("bpe.tsv")
    with open(data, "w") as f:
        f.write("sentence1\tsentence2\nI went to the café, déjà vu.\tAt the store, I bought fresh strawberries.\n")
    h5, html = out("bpe.h5"), out("bpe.html")
    run("run", "--model", model, "--set", "dataset.path=" + data, "--set", "detectors=next_token", "-o", h5, "--no-progress")
    with h5py.File(h5, "r") as f:
        assert f.attrs["subword_kind"] == "byte-level BPE", f.attrs["subword_kind"]
        raw = list(f["tokens/text"].asstr()[...])
    assert "Ġstore" in raw and "Ã©" in raw, raw
    run("report", h5, "-o", html)
    driver = browser()
    try:
        url = open_report(driver, html)
        assert_offline_and_clean(driver, url)
        fig = driver.find_element("css selector", "#model-view .figure.headview")
        shown = [t.text for t in fig.find_elements("css selector", "text.token.left")]
        assert "▁store" in shown and "é" in shown and "Ġstore" not in shown and "Ã©" not in shown, shown
        assert any(re.fullmatch(r"<0x[0-9A-F]{2}>", t) for t in shown), shown  # "à" split between tokens
        titles = [t.get_attribute("textContent") for t in fig.find_elements("css selector", "text.token.left title")]
        assert 'vocabulary token "Ġstore"' in titles, titles
        driver.execute_script("arguments[0].scrollIntoView()", fig)
        fig.screenshot(os.path.join(SHOTS, "byte-level-head-view.png"))
    finally:
        driver.quit()


NOT_VISIBLE_RGB = (196, 196, 196)  # report.js NOT_VISIBLE, #c4c4c4


def test_report_draws_causal_maps():
    """A decoder's file (the random Gemma 3: layers 0 and 2 sliding windows of 10 keys, 1 and 3 causal) in the
    report: the overview says the model is causal with sliding windows; next_token (NaN by design) reads
    "undefined on this model" instead of a heatmap or a table of n/a; the model view paints exactly the
    structural zeros that key_ranges give gray (every other pixel on the white-to-red scale, learned zeros
    white) under the legend "not visible to this query"; the head view greys the keys a selected query cannot
    see in the layer shown and draws no line to them."""
    fixtures = os.environ.get("ATTNSCAN_FIXTURE_DIR") or os.path.join(os.path.dirname(os.path.dirname(BIN)), "fixtures")
    model = os.path.join(fixtures, "decoders", "gemma3_text", "model")
    if not os.path.exists(os.path.join(model, "model.safetensors")):
        raise Skip(f"{model} missing: made by tests/reference/make_decoder_fixtures.py during the README test command")
    data = out("texts.tsv")
    with open(data, "w") as f:
        f.write("sentence1\n"
                "The committee met on Tuesday to discuss the budget, and after a long debate it approved the plan.\n"
                "I went to the store and bought fresh strawberries, bread, milk and a newspaper for my father.\n"
                "A man is playing a guitar on the stage while the crowd sings along.\n")
    h5, html = out("causal.h5"), out("causal.html")
    run("run", "--model", model, "--set", "dataset.path=" + data, "--set", "dataset.sentence_b=",
        "--set", "detectors=next_token,prev_token", "-o", h5, "--no-progress")
    with h5py.File(h5, "r") as f:
        ranges = [tuple(int(x) for x in r) for r in f["attention"].attrs["key_ranges"].reshape(-1, 2)]
        layers = [int(x) for x in f["attention"].attrs["layers"]]
        n = int(f["examples/n_tokens"][0])
        assert np.isnan(f["scores/next_token/next_token/values"][...]).all()
    assert ranges == [(9, 0), (-1, 0), (9, 0), (-1, 0)], ranges
    assert n > 12, f"the first text has {n} tokens: not past the 10-key window"
    query, key = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    mask = {l: ((b < 0) | (key >= query - b)) & ((a < 0) | (key <= query + a)) for l, (b, a) in zip(layers, ranges)}
    run("report", h5, "-o", html)
    driver = browser()
    try:
        url = open_report(driver, html)
        assert_offline_and_clean(driver, url)
        # The overview says what the model's queries see.
        rows = {r.find_element("css selector", "th").text: r.find_element("css selector", "td").text
                for r in driver.find_elements("css selector", "#overview table tr")}
        assert rows["attention"] == ("causal model: layers 0, 2: causal, a sliding window of 10 keys: the query and the 9 "
                                     "before it; layers 1, 3: causal: each query sees itself and the keys before it"), rows
        note = driver.find_element("css selector", "#overview .causal-note").text
        assert note.startswith("This model is causal, with sliding windows"), note
        # next_token: undefined on this model, in the overview and in its section; prev_token drawn.
        und = driver.find_element("css selector", '#overview .undefined-output[data-key="next_token/next_token"]').text
        assert "Undefined on this model" in und and "NaN by design" in und, und
        assert not driver.find_elements("css selector", '.heatmap[data-name="next_token-next_token-heatmap"]')
        assert driver.find_elements("css selector", '.heatmap[data-name="prev_token-prev_token-heatmap"]')
        section = driver.find_element("css selector", 'section.pattern[data-key="next_token/next_token"]')
        assert "undefined on this model" in section.text and "n/a" not in section.text, section.text
        assert not section.find_elements("css selector", "table.top-heads, .headview")
        # The model view: gray exactly where key_ranges hide the key (one pixel per weight at this length).
        mv = driver.find_element("css selector", "#model-view .modelview")
        legend = mv.find_element("css selector", ".not-visible-legend").text
        assert "not visible to this query (causal, sliding window)" in legend, legend
        pixels = driver.execute_script(
            "return Array.from(arguments[0].querySelectorAll('canvas.head-map')).map((c) => "
            "[+c.dataset.layer, +c.dataset.head, c.width, Array.from(c.getContext('2d').getImageData(0, 0, c.width, c.height).data)]);", mv)
        assert len(pixels) == 4 * 4, len(pixels)
        gray_cells = 0
        for layer, head, side, rgba in pixels:
            assert side == n, (side, n)
            px = np.array(rgba, dtype=np.int64).reshape(n, n, 4)[..., :3]
            gray = (px == NOT_VISIBLE_RGB).all(-1)
            assert np.array_equal(gray, ~mask[layer]), (layer, head, np.argwhere(gray != ~mask[layer])[:5])
            gray_cells += int(gray.sum())
            seen = px[mask[layer]]
            assert ((seen[:, 0] == 255) | (seen[:, 1] != seen[:, 2])).all(), (layer, head)  # white-to-red, never gray
        print(f"model view: {gray_cells} structural zeros gray in 16 maps of {n} tokens")
        os.makedirs(SHOTS, exist_ok=True)
        driver.execute_script("arguments[0].scrollIntoView()", mv)
        mv.screenshot(os.path.join(SHOTS, "causal-model-view-grid.png"))
        # The head view: pin a late query; in a windowed layer the keys before its window and after it are gray.
        fig = driver.find_element("css selector", "#model-view .figure.headview")
        assert "not visible to this query" in fig.find_element("css selector", ".not-visible-legend").text
        from selenium.webdriver.support.ui import Select
        q = n - 1
        for layer in (0, 1):
            Select(fig.find_element("css selector", "select.layer-select")).select_by_value(str(layer))
            pick_heads(fig, {0, 1, 2, 3})
            set_threshold(driver, fig, 0)
            left = fig.find_elements("css selector", "text.token.left")[q]
            driver.execute_script("arguments[0].scrollIntoView()", fig)
            if "underline" != left.get_attribute("text-decoration"):
                left.click()
            hidden = sorted(int(r.get_attribute("data-k")) for r in fig.find_elements("css selector", "rect.not-visible-key"))
            assert hidden == [k for k in range(n) if not mask[layer][q, k]], (layer, hidden)
            drawn = {k for qq, k, _, _ in lines(fig)}
            assert all(qq == q for qq, _, _, _ in lines(fig))
            assert drawn and all(mask[layer][q, k] for k in drawn), (layer, sorted(drawn))
            fig.screenshot(os.path.join(SHOTS, f"causal-head-view-layer{layer}.png"))
        screenshot_sections(driver, "causal")
    finally:
        driver.quit()


def test_bad_input_is_refused():
    model_dir()
    h5 = sample_run()
    cases = []
    text = out("notes.txt")
    with open(text, "w") as f:
        f.write("not hdf5\n")
    cases.append((["report", text], "cannot open as HDF5"))
    plain = out("plain.h5")
    with h5py.File(plain, "w") as f:
        f["x"] = [1, 2, 3]
    cases.append((["report", plain], "not an attnscan output"))
    newer = out("newer.h5")
    shutil.copy(h5, newer)
    with h5py.File(newer, "r+") as f:
        current = int(f.attrs["format_version"])  # what this attnscan writes, hence the newest it reads
        f.attrs["format_version"] = 99
    cases.append((["report", newer], f"format_version 99 is newer than this attnscan reads ({current})"))
    plain_run = sample_run("no_scores.h5", "detectors=")
    cases.append((["report", plain_run], "no /scores (the run had no detectors); rerun with detectors"))
    cases.append((["report", h5, "--by", "label"], "--by label, but the file has no labels"))
    cases.append((["plot", h5, "--example", "nope", "--layer", "0", "--head", "0"], "no example with id 'nope'"))
    cases.append((["plot", h5, "--detector", "nope"], "no detector output 'nope'; the file has: next_token/next_token"))
    cases.append((["plot", h5, "--example", "2", "--layer", "9", "--head", "0"], "the model has 6 layers and 12 heads"))
    for args, message in cases:
        target = out("bad.html") if args[0] == "report" else out("badplots")
        p = run(*args, "-o", target, check=False)
        assert p.returncode != 0 and message in p.stderr, (args, p.stderr)
        assert not os.path.exists(target) and not os.path.exists(target + ".tmp"), args


def test_plot_svgs_round_trip():
    model_dir()
    h5 = sample_run()
    folder = out("plots")
    written = run("plot", h5, "-o", folder).stdout.split()
    with h5py.File(h5, "r") as f:
        outputs = list(f["scores"].attrs["outputs"])
        L, H = f["attention"].attrs["model_layers"], f["attention"].attrs["model_heads"]
        assert len(written) == 2 * len(outputs), written
        for key in outputs:
            base = os.path.join(folder, key.replace("/", "-"))
            root = ET.parse(base + "-heatmap.svg").getroot()
            cells = [e for e in root.iter() if e.get("class") == "cell"]
            assert len(cells) == L * H, (key, len(cells))
            mean = f[f"scores/{key}/mean"][...]
            for c in cells:
                l, h = int(c.get("data-layer")), int(c.get("data-head"))
                assert np.float32(float(c.get("data-value"))) == mean[l, h], (key, l, h)
            per_layer = list(ET.parse(base + "-per-layer.svg").getroot().iter())
            points = [e for e in per_layer if e.get("class") == "point"]
            assert len(points) == L * H, (key, len(points))
            # MiniLM's layers all see every key: one baseline line, no per-layer steps.
            assert not [e for e in per_layer if e.get("class") == "layer-baseline"], key
        example_id = f["examples/id"].asstr()[0]
        n, o = int(f["examples/n_tokens"][0]), int(f["examples/attention_offset"][0])
        A = f["attention/values"][o:o + L * H * n * n].reshape(L, H, n, n)
    svg = run("plot", h5, "-o", folder, "--example", example_id, "--layer", "2", "--head", "0").stdout.strip()
    drawn = [e for e in ET.parse(svg).getroot().iter() if e.get("class") == "att"]
    assert drawn, svg
    for e in drawn:
        q, k, w = int(e.get("data-q")), int(e.get("data-k")), float(e.get("data-w"))
        assert abs(w - float(A[2, 0, q, k])) < 1e-4, (q, k, w, A[2, 0, q, k])
    assert len(drawn) == int((A[2, 0] >= 0.01).sum()), (len(drawn), int((A[2, 0] >= 0.01).sum()))
    # A layer map (here ALTI): every line is the stored value of that layer.
    mixing = out("plot-mixing.h5")
    run("run", "--set", "dataset.path=" + os.path.join(ROOT, "data", "sample_pairs.tsv"), "--set", "output.alti=true",
        "--set", "detectors=next_token", "-o", mixing, "--no-progress")
    with h5py.File(mixing, "r") as f:
        n = int(f["examples/n_tokens"][0])
        alti = f["alti/values"][0:L * n * n].reshape(L, n, n)  # example 0 starts at 0
        example_id = f["examples/id"].asstr()[0]
    svg = run("plot", mixing, "-o", folder, "--example", example_id, "--layer", "3", "--map", "alti").stdout.strip()
    drawn = [e for e in ET.parse(svg).getroot().iter() if e.get("class") == "att"]
    assert len(drawn) == int((alti[3] >= 0.01).sum()) and drawn, (len(drawn), svg)
    for e in drawn:
        q, k, w = int(e.get("data-q")), int(e.get("data-k")), float(e.get("data-w"))
        assert abs(w - float(alti[3, q, k])) < 1e-4, (q, k, w, alti[3, q, k])
    p = run("plot", h5, "-o", folder, "--example", example_id, "--layer", "3", "--map", "value_zeroing", check=False)
    assert p.returncode != 0 and "no value_zeroing stored (output.value_zeroing of the run)" in p.stderr, p.stderr


if __name__ == "__main__":
    sys.exit(harness_main(globals(), "SHOTS"))
