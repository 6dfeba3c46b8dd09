"""adapter/config.py: serve's options from a TOML file, HUDI_METASTORE_* variables and flags
(flags > environment > file), the database password from the environment or a file, and
`config show` with secrets masked."""

from __future__ import annotations

import pytest

from adapter import config
from tests.cli_helpers import assert_one_line_error, run_cli


def shown(stdout: str) -> dict[str, tuple[str, str]]:
    """`config show` lines as {key: (value text, source)}."""
    out = {}
    for line in stdout.splitlines():
        if line.startswith("#") or "=" not in line:
            continue
        left, _, source = line.partition("  # ")
        key, _, value = left.partition(" = ")
        out[key.strip()] = (value.strip(), source.strip())
    return out


def test_precedence_flags_over_environment_over_file(tmp_path):
    cfg = tmp_path / "metastore.toml"
    cfg.write_text('host = "0.0.0.0"\nport = 1111\nworkers = 3\nframed = true\nmirror_interval = 2\n'
                   '[serve]\nlock-timeout = 60\n')
    r = run_cli("--config", str(cfg), "config", "show", "--workers", "5",
                env={"HUDI_METASTORE_PORT": "2222", "HUDI_METASTORE_NO_STORAGE_MIRROR": "yes"})
    assert r.returncode == 0, r.stderr
    got = shown(r.stdout)
    assert got["host"] == ('"0.0.0.0"', "file")
    assert got["port"] == ("2222", "env HUDI_METASTORE_PORT")
    assert got["workers"] == ("5", "flag")
    assert got["framed"] == ("true", "file")
    assert got["mirror_interval"] == ("2.0", "file")
    assert got["lock_timeout"] == ("60.0", "file")
    assert got["no_storage_mirror"] == ("true", "env HUDI_METASTORE_NO_STORAGE_MIRROR")
    assert got["event_ttl"] == ("86400", "default")


def test_config_file_from_environment_and_after_the_command(tmp_path):
    cfg = tmp_path / "m.toml"
    cfg.write_text("port = 3333\n")
    r = run_cli("config", "show", env={"HUDI_METASTORE_CONFIG": str(cfg)})
    assert shown(r.stdout)["port"] == ("3333", "file")
    r = run_cli("config", "show", "--config", str(cfg), "--port", "4444")
    assert shown(r.stdout)["port"] == ("4444", "flag")


def test_config_show_masks_secrets(tmp_path):
    cfg = tmp_path / "m.toml"
    cfg.write_text('db_url = "postgresql://hms:s3cret-in-file@db.example/hms"\n')
    r = run_cli("--config", str(cfg), "config", "show")
    assert r.returncode == 0, r.stderr
    assert "s3cret-in-file" not in r.stdout
    assert shown(r.stdout)["db_url"][0] == '"postgresql://hms:***@db.example/hms"'
    r = run_cli("config", "show", "--db-url", "postgresql://hms@db.example/hms",
                env={"HUDI_METASTORE_DB_PASSWORD": "env-s3cret"})
    assert r.returncode == 0, r.stderr
    assert "env-s3cret" not in r.stdout and "env-s3cret" not in r.stderr
    assert shown(r.stdout)["db_password"] == ('"***"', "env HUDI_METASTORE_DB_PASSWORD")


@pytest.mark.parametrize("text, words", [
    ("port = \n", ["not valid TOML"]),
    ("no_such_option = 1\n", ["no_such_option", "no command has an option --no-such-option"]),
    ('port = "eighty"\n', ["port", "eighty"]),
    ("[serve]\nmetastore = 'thrift://x:1'\n", ["[serve] metastore", "has no option --metastore"]),
    ("[nonsense]\nport = 1\n", ["[nonsense] is not a command"]),
    ("framed = 3\n", ["expected true or false"]),
])
def test_bad_config_file_is_one_line(tmp_path, text, words):
    cfg = tmp_path / "bad.toml"
    cfg.write_text(text)
    assert_one_line_error(run_cli("--config", str(cfg), "config", "show"), *words)


def test_missing_config_file_and_bad_environment_value(tmp_path):
    assert_one_line_error(run_cli("--config", str(tmp_path / "none.toml"), "config", "show"),
                          "none.toml", "No such file")
    assert_one_line_error(run_cli("config", "show", env={"HUDI_METASTORE_WORKERS": "many"}),
                          "HUDI_METASTORE_WORKERS", "many")


def test_other_commands_take_the_same_configuration(tmp_path):
    """A setting for every command (the metastore URI) reaches the client commands; unknown
    HUDI_METASTORE_* variables (other tools' settings) are left alone."""
    r = run_cli("stats", "db.t", env={"HUDI_METASTORE_METASTORE": "thrift://127.0.0.1:1",
                                      "HUDI_METASTORE_SOMETHING_ELSE": "x"})
    assert_one_line_error(r, "thrift://127.0.0.1:1")


def test_database_password_joined_to_the_url(tmp_path):
    pw = tmp_path / "pw"
    pw.write_text("p@ss:word/1\n")
    url = config.database_url("postgresql://hms@db:5432/hms", str(pw), {})
    from sqlalchemy.engine import make_url

    assert make_url(url).password == "p@ss:word/1" and make_url(url).username == "hms"
    url = config.database_url("postgresql://hms@db/hms", None, {config.PASSWORD_ENV: "x y"})
    assert make_url(url).password == "x y"
    assert config.database_url("sqlite:///m.db", None, {}) == "sqlite:///m.db"
    with pytest.raises(config.ConfigError, match="given twice"):
        config.database_url("postgresql://hms@db/hms", str(pw), {config.PASSWORD_ENV: "x"})
    with pytest.raises(config.ConfigError, match="URL has a password"):
        config.database_url("postgresql://hms:a@db/hms", None, {config.PASSWORD_ENV: "x"})
    with pytest.raises(config.ConfigError, match="password file"):
        config.database_url("postgresql://hms@db/hms", str(tmp_path / "none"), {})


def test_every_serve_option_is_configurable():
    """Options added to `serve` later get their file key and variable without further code."""
    from adapter.cli import build_parser

    parser = build_parser()
    serve = dict(config.commands(parser))["serve"]
    serve.add_argument("--some-new-limit", type=int, default=7)
    layers = config.Layers(path="t.toml", doc={"serve": {"some-new-limit": 8}},
                           environ={"HUDI_METASTORE_LOG_LEVEL": "WARNING"})
    config.apply(parser, layers)
    args = parser.parse_args(["serve"])
    assert args.some_new_limit == 8 and args.log_level == "WARNING"
    assert parser.parse_args(["serve", "--some-new-limit", "9"]).some_new_limit == 9
    config.apply(parser, config.Layers(environ={"HUDI_METASTORE_SOME_NEW_LIMIT": "10"}))
    assert parser.parse_args(["serve"]).some_new_limit == 10
