"""``streamlit ...`` for browser tests, with the tests' encoder registered in the server process.

Fixture corpora are built with the hashing test encoder, injected by the tests (no setting can
select it); the app finds the query encoder of a corpus by the key its manifest records
(``pipeline.embed.encoders.register_encoder``), and builds started from the browser use it too
(``explorer.services.job_runner.BUILD_PROGRAM``). Usage, as ``python -m streamlit``::

    python tests/serve_app.py run app.py --server.port 8501 -- --artifacts DIR
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from explorer.services import job_runner
from pipeline.embed.encoders import HashingEncoder, register_encoder  # noqa: E402

register_encoder(HashingEncoder())
# Builds started from the browser run the CLI through the tests' driver: the same code path, with
# the hashing encoder injected (tests/build_driver.py).
# With ATLAS_TEST_BUILD_HOLD=FILE they wait as the cluster stage starts while FILE exists (a test
# cancels a build that is certainly running).
_HOLD = os.environ.get("ATLAS_TEST_BUILD_HOLD")
job_runner.BUILD_PROGRAM = (
    str(Path(__file__).resolve().parent / "build_driver.py"),
    *(("--hold", _HOLD, "--at", "enter:cluster") if _HOLD else ()),
    "--",
)

if __name__ == "__main__":
    from streamlit.web.cli import main

    sys.exit(main())
