"""``streamlit ...`` for browser tests, with the tests' encoder registered in the server process.

Fixture corpora are built with the hashing test encoder, injected by the tests (no setting can
select it); the app finds the query encoder of a corpus by the key its manifest records
(``pipeline.embed.register_encoder``). Usage, as ``python -m streamlit``::

    python tests/serve_app.py run app.py --server.port 8501 -- --artifacts DIR
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.embed import HashingEncoder, register_encoder  # noqa: E402

register_encoder(HashingEncoder())

if __name__ == "__main__":
    from streamlit.web.cli import main

    sys.exit(main())
