"""`python -m tools.java_artifacts`'s command line: an entry given where the command belongs (the
docs once said `java_artifacts trino-server`) is answered with the command that fetches it."""

from __future__ import annotations

import pytest

from tools.java_artifacts import main


def test_an_entry_in_place_of_the_command_names_the_fetch(capsys):
    with pytest.raises(SystemExit) as done:
        main(["trino-server"])
    assert done.value.code == 2
    assert "trino-server is an entry, not a command: python -m tools.java_artifacts fetch trino-server" \
        in capsys.readouterr().err
