"""The docs site: it builds strictly, documents every public name, and its examples run.

Every fenced block of ``docs/**/*.md`` and ``README.md`` is accounted for (see
tests/recipes/blocks.py): a ``python`` block runs here (``>>>`` blocks as doctests,
others executed), unless its marker says which test runs it or why it must not run.
"""

from __future__ import annotations

import doctest
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import rankaug
import rankaug.types
from tests import ahead
from tests.recipes.blocks import PAGES, ROOT, Block, blocks
from tests.toolchain import TOOLCHAIN, missing_optional

BLOCKS = blocks()
RUN_HERE = [b for b in BLOCKS if b.lang == "python" and b.mark is None]
# the recipes: tests/recipes/*_train.py load lightning, accelerate and stateful; in .venv-tv,
# tests/batch/test_torchvision.py loads torchvision, tests/stream/test_ddp_mosaicml.py mosaicml
RECIPES = {"lightning", "accelerate", "stateful", "torchvision", "mosaicml", "accelerate_stream"}
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def run_block(block: Block) -> None:
    """Run one block: its doctests, or its code as a script."""
    if ">>> " in block.code:
        test = doctest.DocTestParser().get_doctest(block.code, {}, block.name, str(block.page),
                                                   block.line)  # fmt: skip
        runner = doctest.DocTestRunner(optionflags=FLAGS)
        runner.run(test, out=lambda text: print(text, end=""))
        assert runner.failures == 0, f"{block.name}: {runner.failures} failed (output above)"
    else:
        code = compile("\n" * block.line + block.code, block.name, "exec")
        exec(code, {"__name__": "__docs__"})


class TestCodeBlocks:
    def test_every_block_is_run_or_marked(self) -> None:
        for block in BLOCKS:
            assert block.lang in {"python", "bash", "text"}, block.name
            if block.lang != "python" or block.mark is not None:
                # shell, outputs and launches say why they do not run here
                assert block.mark is not None, f"{block.name}: a {block.lang} block, unmarked"
                assert block.note is not None, block.name
                assert block.note.strip(), block.name

    def test_marked_blocks_are_run_elsewhere_or_say_why(self) -> None:
        counts = {"no-run": 0, "recipe": 0, "run-by": 0}
        for block in BLOCKS:
            if block.mark is None:
                continue
            counts[block.mark] += 1
            if block.mark == "recipe":
                assert block.note in RECIPES, block.name
                assert block.lang == "python"
            elif block.mark == "run-by":
                assert (ROOT / str(block.note).split(" ")[0]).is_file(), block.name
        assert counts["recipe"] == len(RECIPES)  # each recipe once
        assert counts["run-by"] == 1  # the README's quick start, under torchrun
        assert len(RUN_HERE) >= 10
        # python shown but never run: only sketches that need your own data
        sketches = [b.name for b in BLOCKS if b.lang == "python" and b.mark == "no-run"]
        assert sketches == ["docs/guides/caching.md:4"]

    def test_the_readme_and_every_page_are_read(self) -> None:
        pages = {b.page for b in BLOCKS}
        assert ROOT / "README.md" in pages
        assert len(PAGES) >= 15

    @pytest.mark.parametrize("block", RUN_HERE, ids=[b.name for b in RUN_HERE])
    def test_block_runs(self, block: Block) -> None:
        hidden = sys.modules.get("tests.without_extras")
        needs = set(re.findall(r"^(?:from|import) (\w+)", block.code, re.MULTILINE))
        if hidden is not None and needs & hidden.EXTRAS:
            pytest.skip(
                f"needs {', '.join(sorted(needs & hidden.EXTRAS))}, hidden in the quick tier"
            )
        absent = missing_optional(re.findall(r"^(?:>>> )?(?:from|import) (\w+)", block.code, re.M))
        if absent:
            pytest.skip(f"needs {', '.join(absent)}, installed on Python 3.11 and newer only")
        run_block(block)


def build(folder: Path) -> tuple[Path, subprocess.CompletedProcess[str]]:
    """``mkdocs build --strict`` into ``folder/site`` (a job of tests.ahead)."""
    mkdocs = Path(sys.executable).with_name("mkdocs")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    result = subprocess.run(
        [str(mkdocs), "build", "--strict", "--site-dir", str(folder / "site")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    return folder / "site", result


def api_names() -> list[str]:
    text = (ROOT / "docs" / "reference" / "api.md").read_text()
    return [line[4:].strip() for line in text.splitlines() if line.startswith("::: ")]


class TestSite:
    def test_the_api_reference_lists_every_public_name_once(self) -> None:
        documented = [name.removeprefix("rankaug.") for name in api_names()]
        public = [name for name in rankaug.__all__ if name != "__version__"]
        missing = sorted(set(public) - set(documented))
        assert not missing, f"add `::: rankaug.NAME` to docs/reference/api.md for {missing}"
        assert len(documented) == len(set(documented))

    @TOOLCHAIN
    def test_mkdocs_builds_strictly(self, tmp_path: Path) -> None:
        site, result = ahead.result("site", lambda: tmp_path)
        assert result.returncode == 0, result.stdout + result.stderr
        api = (site / "reference" / "api" / "index.html").read_text()
        for name in api_names():
            assert f'id="{name}"' in api, name  # rendered from its docstring
        for name in rankaug.types.__all__:  # a type alias renders only with a docstring
            assert f'id="rankaug.types.{name}"' in api, name
        started = (site / "getting-started" / "index.html").read_text()
        assert "the first with partners" in started  # the README's quick start
