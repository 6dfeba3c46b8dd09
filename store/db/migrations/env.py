"""Alembic environment: runs migrations on the engine handed over in `config.attributes`."""

from alembic import context

from store.db.schema import metadata

config = context.config
engine = config.attributes.get("engine")
if engine is None:  # plain `alembic` CLI use: take the URL from -x url=...
    from store.db.engine import make_engine

    engine = make_engine(context.get_x_argument(as_dictionary=True)["url"])


def _sqlite_foreign_keys(connection, on: bool) -> None:
    """On the DBAPI connection, outside any transaction: the pragma is ignored inside one."""
    raw = connection.connection.driver_connection
    assert raw is not None
    raw.execute(f"PRAGMA foreign_keys={'ON' if on else 'OFF'}")


with engine.connect() as connection:
    # SQLite: a batch migration rebuilds a table by dropping it, which with foreign keys on would
    # cascade into the tables referring to it (deleting their rows)
    sqlite = connection.dialect.name == "sqlite"
    if sqlite:
        _sqlite_foreign_keys(connection, False)
    try:
        context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
        with context.begin_transaction():
            context.run_migrations()
    finally:
        if sqlite:
            _sqlite_foreign_keys(connection, True)
