"""Configuration of every command: flags > environment (HUDI_METASTORE_*) > TOML file (--config) > defaults.

Nothing here lists options: every option of every command comes from its argparse definition. An
option's key is its dest: `--db-url` is `db_url` (or `db-url`) in the file and HUDI_METASTORE_DB_URL
in the environment; `--no-storage-mirror` is `no_storage_mirror = true` / HUDI_METASTORE_NO_STORAGE_MIRROR=1.
Top-level keys of the file apply to every command that has the option; a table named after the
command (`[serve]`, `[sync-storage]`, `[db-upgrade]`) overrides them for that command.

The database password is never an option (it would show in `ps`): HUDI_METASTORE_DB_PASSWORD or a
file (`--db-password-file`), joined to a URL without one.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

ENV_PREFIX = "HUDI_METASTORE_"
CONFIG_ENV = ENV_PREFIX + "CONFIG"
PASSWORD_ENV = ENV_PREFIX + "DB_PASSWORD"
_NOT_OPTIONS = {"help", "version", "config", "debug"}
_TRUE, _FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off", ""}
MASK = "***"


class ConfigError(ValueError):
    """A configuration that cannot be used (the message says which value and where it came from)."""


def env_name(dest: str) -> str:
    return ENV_PREFIX + dest.upper()


def options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The configurable options of one (sub)command: every optional argument with a value."""
    return [a for a in parser._actions
            if a.option_strings and a.dest not in _NOT_OPTIONS and a.dest is not argparse.SUPPRESS
            and not isinstance(a, (argparse._SubParsersAction, argparse._HelpAction, argparse._VersionAction))]


def commands(parser: argparse.ArgumentParser, prefix: str = "") -> Iterator[tuple[str, argparse.ArgumentParser]]:
    """(name, parser) of every leaf command: 'serve', 'db-upgrade', ..."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield prefix, parser
        return
    for action in subs:
        for name, p in action.choices.items():
            yield from commands(p, f"{prefix}-{name}" if prefix else name)


def _every(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser]]:
    """The program's own options (command "": --log-level, ...) and every command's."""
    return [("", parser), *commands(parser)]


def load_file(path: str | None) -> dict[str, Any]:
    if not path:
        return {}
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        with open(path, "rb") as f:
            return tomllib.load(f)
    except OSError as exc:
        raise ConfigError(f"config file {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"config file {path}: not valid TOML: {exc}") from None


def _key(name: str) -> str:
    return name.replace("-", "_")


def _is_flag(action: argparse.Action) -> bool:
    return isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction))


def convert(action: argparse.Action, raw: Any, origin: str) -> Any:
    """A file or environment value as the option's type (as if given on the command line)."""
    if _is_flag(action):
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in _TRUE or text in _FALSE:
            return (text in _TRUE) == isinstance(action, argparse._StoreTrueAction)
        raise ConfigError(f"{origin}: expected true or false, got {raw!r}")
    if isinstance(raw, (dict, list)) or (isinstance(raw, bool) and action.type is not bool):
        raise ConfigError(f"{origin}: expected a single value, got {raw!r}")
    try:
        value = action.type(raw if isinstance(raw, str) or action.type is not str else str(raw)) \
            if callable(action.type) else (raw if isinstance(raw, str) else str(raw))
    except (TypeError, ValueError, argparse.ArgumentTypeError) as exc:
        raise ConfigError(f"{origin}: bad value {raw!r} ({exc})") from None
    if action.choices is not None and value not in action.choices:
        raise ConfigError(f"{origin}: {raw!r} is not one of {', '.join(map(str, action.choices))}")
    return value


@dataclass
class Layers:
    """Where the configuration came from: the file (path and contents) and the environment."""

    path: str | None = None
    doc: dict[str, Any] = field(default_factory=dict)
    environ: Mapping[str, str] = field(default_factory=dict)
    sources: dict[str, dict[str, str]] = field(default_factory=dict)  # command -> dest -> where

    def file_value(self, command: str, dest: str) -> tuple[bool, Any, str]:
        section = self.doc.get(command)
        for table, where in ((section, f"[{command}]"), (self.doc, "")):
            if not isinstance(table, dict):
                continue
            for k, v in table.items():
                if _key(k) == dest and not isinstance(v, dict):
                    return True, v, f"config file {self.path}: {where}{' ' if where else ''}{k}"
        return False, None, ""


def check_keys(layers: Layers, parser: argparse.ArgumentParser) -> None:
    """Every key of the file names an option of some command, and every table a command."""
    known: dict[str, set[str]] = {name: {a.dest for a in options(p)} for name, p in _every(parser)}
    every = set().union(*known.values()) if known else set()
    for k, v in layers.doc.items():
        if isinstance(v, dict):
            if k not in known or not k:
                raise ConfigError(f"config file {layers.path}: [{k}] is not a command "
                                  f"(one of {', '.join(sorted(known))})")
            for sk in v:
                if _key(sk) not in known[k]:
                    raise ConfigError(f"config file {layers.path}: [{k}] {sk}: `{k}` has no option --{sk}")
        elif _key(k) not in every:
            raise ConfigError(f"config file {layers.path}: {k}: no command has an option --{k.replace('_', '-')}")


def apply(parser: argparse.ArgumentParser, layers: Layers) -> None:
    """Make file and environment values the defaults of every command's options, so flags win."""
    check_keys(layers, parser)
    for command, p in _every(parser):
        sources = layers.sources.setdefault(command, {})
        for action in options(p):
            found, raw, origin = layers.file_value(command, action.dest)
            where = "file"
            env = env_name(action.dest)
            if env in layers.environ:
                found, raw, origin, where = True, layers.environ[env], f"environment {env}", "env"
            if not found:
                sources[action.dest] = "default"
                continue
            action.default = convert(action, raw, origin)
            action.required = False
            sources[action.dest] = where


def given_on_command_line(parser: argparse.ArgumentParser, argv: list[str]) -> set[str]:
    """Dests of the options `argv` sets explicitly (for `config show`)."""
    marker = object()
    acts = options(parser)
    saved = [(a, a.default, a.required) for a in acts]
    try:
        for a in acts:
            a.default, a.required = marker, False
        ns, _ = parser.parse_known_args(argv)
    finally:
        for a, default, required in saved:
            a.default, a.required = default, required
    return {a.dest for a in acts if getattr(ns, a.dest, marker) is not marker}


# --------------------------------------------------------------------------- the database password


def database_url(url: str, password_file: str | None, environ: Mapping[str, str]) -> str:
    """`url` with the password from HUDI_METASTORE_DB_PASSWORD or `password_file` (one of them)."""
    password, where = None, ""
    if password_file:
        try:
            with open(password_file, encoding="utf-8") as f:
                password = f.read().rstrip("\r\n")
        except OSError as exc:
            raise ConfigError(f"database password file {password_file}: {exc.strerror or exc}") from None
        where = f"--db-password-file {password_file}"
    if PASSWORD_ENV in environ:
        if password is not None:
            raise ConfigError(f"the database password is given twice ({PASSWORD_ENV} and {where}): keep one")
        password, where = environ[PASSWORD_ENV], PASSWORD_ENV
    if password is None:
        return url
    from sqlalchemy.engine import make_url

    from adapter.preflight import parsed_url

    u = parsed_url(url)
    if u.password is not None:
        raise ConfigError(f"the database URL has a password and {where} gives another: keep one")
    return make_url(url).set(password=password).render_as_string(hide_password=False)


def masked(dest: str, value: Any) -> Any:
    """A value as `config show` prints it: passwords in URLs and secret options replaced by ***."""
    if value is None:
        return None
    if any(w in dest for w in ("password", "secret", "token")) and "file" not in dest:
        return MASK
    if isinstance(value, str) and "://" in value and "@" in value:
        try:
            from sqlalchemy.engine import make_url

            u = make_url(value)
            return u.render_as_string(hide_password=True) if u.password is not None else value
        except Exception:  # not a database URL: mask whatever sits between ':' and '@'
            head, _, rest = value.partition("://")
            cred, _, host = rest.rpartition("@")
            return f"{head}://{cred.split(':', 1)[0]}:{MASK}@{host}" if ":" in cred else value
    return value


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return json.dumps(str(value), ensure_ascii=False)


def show(command: str, args: argparse.Namespace, parser: argparse.ArgumentParser, layers: Layers,
         explicit: set[str]) -> list[str]:
    """The effective configuration of `command` as TOML lines, each with where it came from."""
    out = [f"# effective configuration of `hudi-metastore {command}`",
           "# precedence: flags > environment (HUDI_METASTORE_*) > config file > defaults",
           f"# config file: {layers.path or '(none)'}"]
    sources = layers.sources.get(command, {})
    rows = []
    for action in options(parser):
        value = masked(action.dest, getattr(args, action.dest, None))
        where = "flag" if action.dest in explicit else sources.get(action.dest, "default")
        if where == "env":
            where = f"env {env_name(action.dest)}"
        line = (f"{action.dest} = {toml_value(value)}" if value is not None
                else f"# {action.dest} = (unset)")
        rows.append((line, where))
    if PASSWORD_ENV in layers.environ:
        rows.append((f"db_password = {toml_value(MASK)}", f"env {PASSWORD_ENV}"))
    width = max(len(line) for line, _ in rows) if rows else 0
    return out + [f"{line.ljust(width)}  # {where}" for line, where in rows]
