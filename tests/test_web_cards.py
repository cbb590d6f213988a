"""The build's card faces (a file per face, optimised) drawn as the svg-cards package draws
them: Chromium renders every face from its built file and from the package's own sprite, both
served by a real `croupier serve`, and the two pictures must match once edges are averaged
out (svgo's rounding moves them by a fraction of a pixel; a lost or wrong shape does not
average out)."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest

from tests.support import REPO, ServerProcess, free_port
from tests.web_table_support import CHROMIUM, launch

pytestmark = [pytest.mark.e2e, pytest.mark.browser]
SPRITE = REPO / "web" / "node_modules" / "svg-cards" / "svg-cards.svg"
CARDS = REPO / "web" / "dist" / "assets" / "cards"
SUITS = ["club", "diamond", "heart", "spade"]
RANKS = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "jack", "queen", "king"]
FACES = [f"{s}_{r}" for s in SUITS for r in RANKS] + ["joker_black", "joker_red", "back"]


def test_every_built_face_draws_as_the_package_draws_it(tmp_path: Path) -> None:
    if not Path(CHROMIUM).exists() or not SPRITE.exists() or not CARDS.is_dir():
        pytest.skip("needs Chromium, web/node_modules and a built web/dist (make web)")
    import numpy as np
    from PIL import Image
    from playwright.sync_api import sync_playwright

    root = tmp_path / "site"
    shutil.copytree(CARDS, root / "cards")
    shutil.copy(SPRITE, root / "sprite.svg")
    files = {}
    for face in FACES:
        found = [p.name for p in CARDS.glob(f"{face}-*.svg")]
        assert len(found) == 1, (face, found)
        files[face] = found[0]
    svg = '<svg id="{id}" viewBox="0 0 169.075 244.64" width="169" height="245">' \
          '<use href="{href}" fill="#1b4f9c"/></svg>'
    rows = "".join(
        "<div>" + svg.format(id=f"a-{face}", href=f"sprite.svg#{face}")
        + svg.format(id=f"b-{face}", href=f"cards/{files[face]}#{face}") + "</div>"
        for face in FACES
    )
    (root / "index.html").write_text(f'<body style="margin:0;background:#0a0">{rows}</body>')
    server = ServerProcess(
        db=tmp_path / "c.db", web_port=free_port(), extra=("--web-root", str(root))
    ).start()
    worst: list[tuple[float, str]] = []
    try:
        with sync_playwright() as p:
            browser = launch(p)
            page = browser.new_page(device_scale_factor=2)
            page.goto(server.web_url, wait_until="networkidle")
            page.wait_for_timeout(300)
            for face in FACES:
                pictures = []
                for side in "ab":
                    png = page.locator(f"#{side}-{face}").screenshot()
                    image = Image.open(io.BytesIO(png)).convert("RGB")
                    # 8x8 device pixels averaged: sub-pixel edge moves vanish, shapes stay
                    small = image.resize((image.width // 8, image.height // 8), Image.Resampling.BOX)
                    pictures.append(np.asarray(small).astype(int))
                assert pictures[0].std() > 20, f"{face}: the package's face did not draw"
                worst.append((float(np.abs(pictures[0] - pictures[1]).max()), face))
            browser.close()
    finally:
        server.stop()
    worst.sort(reverse=True)
    assert worst[0][0] < 40, f"faces that differ from the package's (max level, face): {worst[:5]}"
