"""The vendored conformance suite is run by ``test_conformance.py`` in subprocesses (its
own rootdir, conftest and hypothesis profile), never collected into this session."""

collect_ignore = ["vendor"]
