"""Alembic environment: runs migrations on the engine handed over in `config.attributes`."""

from alembic import context

from store.db.schema import metadata

config = context.config
engine = config.attributes.get("engine")
if engine is None:  # plain `alembic` CLI use: take the URL from -x url=...
    from store.db.engine import make_engine

    engine = make_engine(context.get_x_argument(as_dictionary=True)["url"])

with engine.connect() as connection:
    context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()
