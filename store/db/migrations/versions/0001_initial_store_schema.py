"""initial store schema

Revision ID: 0001
Revises:
Create Date: 2026-11-22 05:33:16.385287
"""
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('db',
    sa.Column('db_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('name', sa.String(length=128), nullable=False),
    sa.Column('description', sa.String(length=4000), nullable=True),
    sa.Column('location_uri', sa.String(length=4000), nullable=True),
    sa.Column('managed_location_uri', sa.String(length=4000), nullable=True),
    sa.Column('owner_name', sa.String(length=128), nullable=True),
    sa.Column('owner_type', sa.Integer(), nullable=True),
    sa.Column('create_time', sa.Integer(), nullable=True),
    sa.PrimaryKeyConstraint('db_id', name=op.f('pk_db')),
    sa.UniqueConstraint('name', name=op.f('uq_db_name'))
    )
    op.create_table('locks',
    sa.Column('lock_id', sa.BigInteger(), nullable=False),
    sa.Column('component', sa.Integer(), nullable=False),
    sa.Column('txn_id', sa.BigInteger(), nullable=False),
    sa.Column('db_name', sa.String(length=128), nullable=False),
    sa.Column('tbl_name', sa.String(length=128), nullable=True),
    sa.Column('part_name', sa.String(length=767), nullable=True),
    sa.Column('lock_type', sa.Integer(), nullable=False),
    sa.Column('lock_level', sa.Integer(), nullable=False),
    sa.Column('state', sa.Integer(), nullable=False),
    sa.Column('operation', sa.Integer(), nullable=True),
    sa.Column('is_transactional', sa.Boolean(), nullable=True),
    sa.Column('user_name', sa.String(length=128), nullable=True),
    sa.Column('host_name', sa.String(length=128), nullable=True),
    sa.Column('agent_info', sa.String(length=4000), nullable=True),
    sa.Column('created_ms', sa.BigInteger(), nullable=False),
    sa.Column('acquired_ms', sa.BigInteger(), nullable=True),
    sa.Column('heartbeat_ms', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('lock_id', 'component', name=op.f('pk_locks'))
    )
    with op.batch_alter_table('locks', schema=None) as batch_op:
        batch_op.create_index('ix_locks_db_tbl', ['db_name', 'tbl_name'], unique=False)

    op.create_table('metastore_info',
    sa.Column('info_key', sa.String(length=64), nullable=False),
    sa.Column('info_value', sa.String(length=256), nullable=False),
    sa.PrimaryKeyConstraint('info_key', name=op.f('pk_metastore_info'))
    )
    op.create_table('sds',
    sa.Column('sd_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('input_format', sa.String(length=4000), nullable=True),
    sa.Column('output_format', sa.String(length=4000), nullable=True),
    sa.Column('compressed', sa.Boolean(), nullable=False),
    sa.Column('num_buckets', sa.Integer(), nullable=False),
    sa.Column('serde_name', sa.String(length=128), nullable=True),
    sa.Column('serde_lib', sa.String(length=4000), nullable=True),
    sa.Column('serde_params',
        sa.Text().with_variant(mysql.MEDIUMTEXT(), 'mariadb').with_variant(mysql.MEDIUMTEXT(), 'mysql'), nullable=True),
    sa.Column('serde_extra', sa.Text(), nullable=True),
    sa.Column('bucket_cols', sa.Text(), nullable=True),
    sa.Column('sort_cols', sa.Text(), nullable=True),
    sa.Column('sd_params',
        sa.Text().with_variant(mysql.MEDIUMTEXT(), 'mariadb').with_variant(mysql.MEDIUMTEXT(), 'mysql'), nullable=True),
    sa.Column('skewed',
        sa.Text().with_variant(mysql.MEDIUMTEXT(), 'mariadb').with_variant(mysql.MEDIUMTEXT(), 'mysql'), nullable=True),
    sa.Column('stored_as_subdirs', sa.Boolean(), nullable=True),
    sa.PrimaryKeyConstraint('sd_id', name=op.f('pk_sds'))
    )
    op.create_table('sequences',
    sa.Column('name', sa.String(length=64), nullable=False),
    sa.Column('next_val', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('name', name=op.f('pk_sequences'))
    )
    op.create_table('txns',
    sa.Column('txn_id', sa.BigInteger(), nullable=False),
    sa.Column('state', sa.String(length=1), nullable=False),
    sa.Column('user_name', sa.String(length=128), nullable=True),
    sa.Column('host_name', sa.String(length=128), nullable=True),
    sa.Column('started_ms', sa.BigInteger(), nullable=False),
    sa.Column('heartbeat_ms', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('txn_id', name=op.f('pk_txns'))
    )
    op.create_table('db_params',
    sa.Column('db_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('param_key', sa.String(length=256), nullable=False),
    sa.Column('param_value',
        sa.Text().with_variant(mysql.MEDIUMTEXT(), 'mariadb').with_variant(mysql.MEDIUMTEXT(), 'mysql'), nullable=True),
    sa.ForeignKeyConstraint(['db_id'], ['db.db_id'], name=op.f('fk_db_params_db_id_db'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('db_id', 'param_key', name=op.f('pk_db_params'))
    )
    op.create_table('functions',
    sa.Column('func_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('db_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('name', sa.String(length=128), nullable=False),
    sa.Column('class_name', sa.String(length=4000), nullable=True),
    sa.Column('owner_name', sa.String(length=128), nullable=True),
    sa.Column('owner_type', sa.Integer(), nullable=True),
    sa.Column('func_type', sa.Integer(), nullable=True),
    sa.Column('create_time', sa.Integer(), nullable=True),
    sa.Column('resource_uris', sa.Text(), nullable=True),
    sa.ForeignKeyConstraint(['db_id'], ['db.db_id'], name=op.f('fk_functions_db_id_db'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('func_id', name=op.f('pk_functions')),
    sa.UniqueConstraint('db_id', 'name', name=op.f('uq_functions_db_id_name'))
    )
    op.create_table('tbl',
    sa.Column('tbl_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('db_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('name', sa.String(length=128), nullable=False),
    sa.Column('owner', sa.String(length=128), nullable=True),
    sa.Column('owner_type', sa.Integer(), nullable=True),
    sa.Column('create_time', sa.Integer(), nullable=False),
    sa.Column('last_access_time', sa.Integer(), nullable=False),
    sa.Column('retention', sa.Integer(), nullable=False),
    sa.Column('tbl_type', sa.String(length=128), nullable=True),
    sa.Column('location', sa.String(length=4000), nullable=True),
    sa.Column('sd_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=True),
    sa.Column('schema_version', sa.Integer(), nullable=False),
    sa.Column('view_original_text',
        sa.Text().with_variant(mysql.MEDIUMTEXT(), 'mariadb').with_variant(mysql.MEDIUMTEXT(), 'mysql'), nullable=True),
    sa.Column('view_expanded_text',
        sa.Text().with_variant(mysql.MEDIUMTEXT(), 'mariadb').with_variant(mysql.MEDIUMTEXT(), 'mysql'), nullable=True),
    sa.Column('rewrite_enabled', sa.Boolean(), nullable=True),
    sa.Column('temporary', sa.Boolean(), nullable=True),
    sa.ForeignKeyConstraint(['db_id'], ['db.db_id'], name=op.f('fk_tbl_db_id_db'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['sd_id'], ['sds.sd_id'], name=op.f('fk_tbl_sd_id_sds')),
    sa.PrimaryKeyConstraint('tbl_id', name=op.f('pk_tbl')),
    sa.UniqueConstraint('db_id', 'name', name=op.f('uq_tbl_db_id_name'))
    )
    op.create_table('partitions',
    sa.Column('part_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('tbl_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('part_name', sa.String(length=767), nullable=False),
    sa.Column('create_time', sa.Integer(), nullable=False),
    sa.Column('last_access_time', sa.Integer(), nullable=False),
    sa.Column('update_time', sa.Integer(), nullable=True),
    sa.Column('location', sa.String(length=4000), nullable=True),
    sa.Column('sd_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=True),
    sa.Column('schema_version', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['sd_id'], ['sds.sd_id'], name=op.f('fk_partitions_sd_id_sds')),
    sa.ForeignKeyConstraint(['tbl_id'], ['tbl.tbl_id'], name=op.f('fk_partitions_tbl_id_tbl'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('part_id', name=op.f('pk_partitions')),
    sa.UniqueConstraint('tbl_id', 'part_name', name=op.f('uq_partitions_tbl_id_part_name'))
    )
    op.create_table('schema',
    sa.Column('col_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), autoincrement=True, nullable=False),
    sa.Column('tbl_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('is_partition_col', sa.Boolean(), nullable=False),
    sa.Column('position', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=128), nullable=False),
    sa.Column('type', sa.Text(), nullable=False),
    sa.Column('comment', sa.String(length=4000), nullable=True),
    sa.ForeignKeyConstraint(['tbl_id'], ['tbl.tbl_id'], name=op.f('fk_schema_tbl_id_tbl'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('col_id', name=op.f('pk_schema')),
    sa.UniqueConstraint('tbl_id', 'version', 'is_partition_col', 'position',
        name=op.f('uq_schema_tbl_id_version_is_partition_col_position'))
    )
    op.create_table('tab_col_stats',
    sa.Column('tbl_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('column_name', sa.String(length=128), nullable=False),
    sa.Column('engine', sa.String(length=128), nullable=False),
    sa.Column('column_type', sa.String(length=4000), nullable=False),
    sa.Column('stats',
        sa.LargeBinary().with_variant(mysql.LONGBLOB(), 'mariadb').with_variant(mysql.LONGBLOB(),
            'mysql'), nullable=False),
    sa.Column('last_analyzed', sa.BigInteger(), nullable=True),
    sa.ForeignKeyConstraint(['tbl_id'], ['tbl.tbl_id'], name=op.f('fk_tab_col_stats_tbl_id_tbl'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('tbl_id', 'column_name', 'engine', name=op.f('pk_tab_col_stats'))
    )
    op.create_table('tbl_params',
    sa.Column('tbl_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('param_key', sa.String(length=256), nullable=False),
    sa.Column('param_value',
        sa.Text().with_variant(mysql.MEDIUMTEXT(), 'mariadb').with_variant(mysql.MEDIUMTEXT(), 'mysql'), nullable=True),
    sa.ForeignKeyConstraint(['tbl_id'], ['tbl.tbl_id'], name=op.f('fk_tbl_params_tbl_id_tbl'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('tbl_id', 'param_key', name=op.f('pk_tbl_params'))
    )
    op.create_table('part_col_stats',
    sa.Column('part_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('column_name', sa.String(length=128), nullable=False),
    sa.Column('engine', sa.String(length=128), nullable=False),
    sa.Column('tbl_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('column_type', sa.String(length=4000), nullable=False),
    sa.Column('stats',
        sa.LargeBinary().with_variant(mysql.LONGBLOB(), 'mariadb').with_variant(mysql.LONGBLOB(),
            'mysql'), nullable=False),
    sa.Column('last_analyzed', sa.BigInteger(), nullable=True),
    sa.ForeignKeyConstraint(['part_id'], ['partitions.part_id'], name=op.f('fk_part_col_stats_part_id_partitions'),
        ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('part_id', 'column_name', 'engine', name=op.f('pk_part_col_stats'))
    )
    with op.batch_alter_table('part_col_stats', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_part_col_stats_tbl_id'), ['tbl_id'], unique=False)

    op.create_table('partition_key_val',
    sa.Column('part_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('key_idx', sa.Integer(), nullable=False),
    sa.Column('tbl_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('part_key_name', sa.String(length=128), nullable=False),
    sa.Column('part_key_val', sa.String(length=256), nullable=False),
    sa.Column('part_key_num', sa.BigInteger(), nullable=True),
    sa.ForeignKeyConstraint(['part_id'], ['partitions.part_id'], name=op.f('fk_partition_key_val_part_id_partitions'),
        ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('part_id', 'key_idx', name=op.f('pk_partition_key_val'))
    )
    with op.batch_alter_table('partition_key_val', schema=None) as batch_op:
        batch_op.create_index('ix_pkv_num', ['tbl_id', 'key_idx', 'part_key_num'], unique=False)
        batch_op.create_index('ix_pkv_val', ['tbl_id', 'key_idx', 'part_key_val'], unique=False)

    op.create_table('partition_params',
    sa.Column('part_id', sa.BigInteger().with_variant(sa.Integer(), 'sqlite'), nullable=False),
    sa.Column('param_key', sa.String(length=256), nullable=False),
    sa.Column('param_value',
        sa.Text().with_variant(mysql.MEDIUMTEXT(), 'mariadb').with_variant(mysql.MEDIUMTEXT(), 'mysql'), nullable=True),
    sa.ForeignKeyConstraint(['part_id'], ['partitions.part_id'], name=op.f('fk_partition_params_part_id_partitions'),
        ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('part_id', 'param_key', name=op.f('pk_partition_params'))
    )


def downgrade() -> None:
    op.drop_table('partition_params')
    with op.batch_alter_table('partition_key_val', schema=None) as batch_op:
        batch_op.drop_index('ix_pkv_val')
        batch_op.drop_index('ix_pkv_num')

    op.drop_table('partition_key_val')
    with op.batch_alter_table('part_col_stats', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_part_col_stats_tbl_id'))

    op.drop_table('part_col_stats')
    op.drop_table('tbl_params')
    op.drop_table('tab_col_stats')
    op.drop_table('schema')
    op.drop_table('partitions')
    op.drop_table('tbl')
    op.drop_table('functions')
    op.drop_table('db_params')
    op.drop_table('txns')
    op.drop_table('sequences')
    op.drop_table('sds')
    op.drop_table('metastore_info')
    with op.batch_alter_table('locks', schema=None) as batch_op:
        batch_op.drop_index('ix_locks_db_tbl')

    op.drop_table('locks')
    op.drop_table('db')
